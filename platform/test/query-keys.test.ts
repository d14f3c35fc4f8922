import Fastify from 'fastify';
import { pino } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { capturedLog } from './support/captured-log.js';
import { baseServerOptions, httpFoundation } from '../src/http-foundation.js';
import { DEFAULT_QUERY_KEY_PARAMETERS, queryKeyNames, queryKeyParameter, redactQueryKeys } from '../src/query-keys.js';

const defaults = queryKeyNames(DEFAULT_QUERY_KEY_PARAMETERS);

describe('redactQueryKeys', () => {
  it.each([
    ['/v1/orders/ord-1', '/v1/orders/ord-1'],
    ['/v1/orders/ord-1?', '/v1/orders/ord-1?'],
    ['/x?api_key=secret', '/x?api_key=[redacted]'],
    ['/x?a=1&token=t0k&b=2&key=k', '/x?a=1&token=[redacted]&b=2&key=[redacted]'],
    ['/x?API_KEY=s&ApiKey=s&apikey=s', '/x?API_KEY=[redacted]&ApiKey=[redacted]&apikey=[redacted]'],
    ['/x?api%5Fkey=s%20t&api+key=s', '/x?api%5Fkey=[redacted]&api+key=s'],
    ['/x?token=a=b=c&token', '/x?token=[redacted]&token'],
    ['/x?api_key=&tokens=t&keys=k', '/x?api_key=&tokens=t&keys=k'],
    ['/x?key=%zz&z=%zz', '/x?key=[redacted]&z=%zz'],
    ['/x?%zz=1&token=t', '/x?%zz=1&token=[redacted]'],
    ['/x?&&token=t&&', '/x?&&token=[redacted]&&'],
  ])('shows %s as %s', (url, logged) => {
    expect(redactQueryKeys(url, defaults)).toBe(logged);
  });

  it('redacts only the names it is given', () => {
    const names = queryKeyNames(['access_token']);
    expect(redactQueryKeys('/x?access_token=a&token=b', names)).toBe('/x?access_token=[redacted]&token=b');
  });
});

describe('queryKeyParameter', () => {
  it('names the first listed parameter whose decoded value passes the test, as the list spells it', () => {
    const isKey = (value: string): boolean => value.startsWith('vr_');
    expect(queryKeyParameter('/x?token=abc&APIKEY=vr%5Fx', defaults, isKey)).toBe('apiKey');
    expect(queryKeyParameter('/x?other=vr_x&token=abc', defaults, isKey)).toBeUndefined();
    expect(queryKeyParameter('/x', defaults, isKey)).toBeUndefined();
  });
});

describe('the request log line', () => {
  it('shows the query parameters baseServerOptions names as [redacted], the default ones when it names none', async () => {
    const { destination, lines } = capturedLog();
    const logger = pino({ level: 'info' }, destination);
    for (const options of [undefined, { queryKeyParameters: ['sig'] }]) {
      const app = Fastify(baseServerOptions(logger, options));
      onTestFinished(() => app.close());
      await app.register(httpFoundation);
      app.get('/things', async () => ({ ok: true }));
      await app.inject({ url: '/things?api_key=s3cret&sig=abc&n=1' });
    }
    expect(lines.filter((line) => line.msg === 'request completed').map(({ url }) => url)).toEqual([
      '/things?api_key=[redacted]&sig=abc&n=1',
      '/things?api_key=s3cret&sig=[redacted]&n=1',
    ]);
  });
});
