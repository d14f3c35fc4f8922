import { describe, expect, it } from 'vitest';
import { serverLimits } from '../src/server-limits.js';
import { buildFoundationApp } from './helpers.js';

describe('baseServerOptions', () => {
  it(
    'gives the Node server the read timeout for the whole request (body included), checked twice a ' + 'second',
    async () => {
      const app = await buildFoundationApp();
      expect(app.server.requestTimeout).toBe(serverLimits.readTimeoutMs);
      expect(app.server.headersTimeout).toBe(serverLimits.readTimeoutMs);
      expect(serverLimits.timeoutCheckIntervalMs).toBeLessThanOrEqual(1_000);
    },
  );
});

describe('httpFoundation', () => {
  it('registers one named plugin per rule', async () => {
    const app = await buildFoundationApp();
    await app.ready();
    for (const name of [
      'draining',
      'route-label',
      'request-guards',
      'write-deadline',
      'method-not-allowed',
      'error-handler',
    ]) {
      expect(app.hasPlugin(name), name).toBe(true);
    }
  });
});
