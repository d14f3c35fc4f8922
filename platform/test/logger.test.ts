import { describe, expect, it } from 'vitest';
import { capturedLog } from './support/captured-log.js';
import { createLogger } from '../src/logger.js';

const KEY = 'vr_AAAAAAAAAAAA_secret-part-of-the-key-that-must-not-be-logged';
const TOKEN = 'Bearer admin-token-that-must-not-be-logged';

/** The process's logger at debug level, its JSON lines kept as it writes them. */
function debugLogger(): { logger: ReturnType<typeof createLogger>; raw: string[] } {
  const { destination, raw } = capturedLog();
  return { logger: createLogger('debug', 'test', { pretty: false, destination }), raw };
}

describe('the log', () => {
  it.each([
    ['a request', (headers: object) => ({ req: { method: 'GET', url: '/v1/orders/ord-1001', headers } })],
    ['a request by its full name', (headers: object) => ({ request: { headers } })],
    ['headers on their own', (headers: object) => ({ headers })],
  ])('writes [redacted] for the API key and the admin token in %s', (_shape, logged) => {
    const { logger, raw } = debugLogger();
    logger.info(logged({ 'api-key': KEY, authorization: TOKEN, 'user-agent': 'curl/8' }), 'logged');
    const [line] = raw;
    expect(line).not.toContain('secret-part');
    expect(line).not.toContain('admin-token');
    expect(line).toContain('"api-key":"[redacted]"');
    expect(line).toContain('"authorization":"[redacted]"');
    expect(line).toContain('"user-agent":"curl/8"');
  });

  it('leaves lines without headers as they are', () => {
    const { logger, raw } = debugLogger();
    logger.info({ version: 1, consumer: 'acme' }, 'request completed');
    expect(JSON.parse(raw[0] ?? '')).toMatchObject({ version: 1, consumer: 'acme', msg: 'request completed' });
  });
});
