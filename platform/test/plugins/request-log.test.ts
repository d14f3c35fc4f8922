import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { capturedLog } from '../support/captured-log.js';
import { buildFoundationApp } from '../helpers.js';

describe('request log', () => {
  it('writes one line per request, by route pattern, and none of Fastify’s own', async () => {
    const { destination, lines } = capturedLog();
    const logger = pino({ level: 'info' }, destination);
    const app = await buildFoundationApp(logger);
    const served = await app.inject({ method: 'GET', url: '/things/7?x=1', headers: { 'x-request-id': 'log-1' } });
    const missing = await app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'log-2' } });
    expect([served.statusCode, missing.statusCode]).toEqual([200, 404]);
    const requestLines = lines.filter((line) => 'reqId' in line);
    expect(requestLines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request completed',
        reqId: 'log-1',
        method: 'GET',
        url: '/things/7?x=1',
        route: '/things/:id',
        statusCode: 200,
      }),
      expect.objectContaining({
        level: 30,
        msg: 'request completed',
        reqId: 'log-2',
        method: 'GET',
        url: '/nowhere',
        route: 'unmatched',
        statusCode: 404,
      }),
    ]);
    for (const line of requestLines) expect(line.responseTimeMs).toEqual(expect.any(Number));
  });

  it('adds the fields an onResponse hook set to that request’s one line, and only to that one', async () => {
    const { destination, lines } = capturedLog();
    const logger = pino({ level: 'info' }, destination);
    const app = await buildFoundationApp(logger);
    app.addHook('onResponse', (request, _reply, done) => {
      if (request.url.startsWith('/things/1')) request.completionLogFields = { deprecated: true, clientId: 'shop' };
      done();
    });
    await app.inject({ method: 'GET', url: '/things/1', headers: { 'x-request-id': 'log-3' } });
    await app.inject({ method: 'GET', url: '/things/2', headers: { 'x-request-id': 'log-4' } });
    const requestLines = lines.filter((line) => 'reqId' in line);
    expect(requestLines).toHaveLength(2);
    expect(requestLines[0]).toMatchObject({
      msg: 'request completed',
      reqId: 'log-3',
      statusCode: 200,
      deprecated: true,
      clientId: 'shop',
    });
    expect(requestLines[1]).toMatchObject({ msg: 'request completed', reqId: 'log-4', statusCode: 200 });
    expect(requestLines[1]).not.toHaveProperty('deprecated');
  });
});
