import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';

const KEY = 'vr_AAAAAAAAAAAA_secret-part-of-the-key-that-must-not-be-logged';
const TOKEN = 'Bearer admin-token-that-must-not-be-logged';

/** A logger at debug level whose JSON lines are kept, as the process would write them. */
function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: () => string[] } {
  const written: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger('debug', 'test', { pretty: false, destination }), lines: () => written.join('').trimEnd().split('\n') };
}

describe('the log', () => {
  it.each([
    ['a request', (headers: object) => ({ req: { method: 'GET', url: '/v1/orders/ord-1001', headers } })],
    ['a request by its full name', (headers: object) => ({ request: { headers } })],
    ['headers on their own', (headers: object) => ({ headers })],
  ])('writes [redacted] for the API key and the admin token in %s', (_shape, logged) => {
    const { logger, lines } = capturedLogger();
    logger.info(logged({ 'api-key': KEY, authorization: TOKEN, 'user-agent': 'curl/8' }), 'logged');
    const [line] = lines();
    expect(line).not.toContain('secret-part');
    expect(line).not.toContain('admin-token');
    expect(line).toContain('"api-key":"[redacted]"');
    expect(line).toContain('"authorization":"[redacted]"');
    expect(line).toContain('"user-agent":"curl/8"');
  });

  it('leaves lines without headers as they are', () => {
    const { logger, lines } = capturedLogger();
    logger.info({ version: 1, consumer: 'acme' }, 'request completed');
    expect(JSON.parse(lines()[0] ?? '')).toMatchObject({ version: 1, consumer: 'acme', msg: 'request completed' });
  });
});
