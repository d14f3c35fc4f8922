// A deprecated version's OpenAPI document, annotated on its way from the backend.
import { describe, expect, it } from 'vitest';
import { at, designPolicyFile, stubbedGatewayPerTest } from '../helpers.js';
import { STUB_OPENAPI } from '../stub-backend.js';

const fixture = stubbedGatewayPerTest();
const request = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
  fixture.gateway.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
const get = (url: string, headers: Record<string, string> = {}) => request('GET', url, headers);

describe('the OpenAPI document of a deprecated version', () => {
  const ANNOTATED = {
    ...STUB_OPENAPI,
    'x-sunset': '2027-01-01T00:00:00.000Z',
    'x-successor-version': 2,
    paths: {
      '/orders/{id}': {
        summary: 'an order',
        get: { responses: { 200: { description: 'ok' } }, deprecated: true },
        delete: { deprecated: true, responses: {} },
      },
    },
  };

  it('marks every operation deprecated and adds x-sunset and x-successor-version from the policy, in every form', async () => {
    for (const [url, headers] of [
      ['/v1/openapi.json', {}],
      ['/api/v1/openapi.json', {}],
      ['/openapi.json', {}],
      ['/openapi.json', { 'api-version': '1' }],
    ] as const) {
      const res = await get(url, headers);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(ANNOTATED);
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
      expect(res.headers).toMatchObject({ deprecation: 'true', 'api-version': '1' });
    }
  });

  it('passes a current version\'s document through untouched, and a deprecated one before its announcement', async () => {
    const current = await get('/openapi.json', { 'api-version': '2' });
    expect(current.json()).toEqual(STUB_OPENAPI);
    fixture.gateway.setNow(at('2026-05-01'));
    expect((await get('/v1/openapi.json')).json()).toEqual(STUB_OPENAPI);
  });

  it('follows a reloaded policy: a later sunset shows in x-sunset at once', async () => {
    expect((await get('/v1/openapi.json')).json()).toMatchObject({ 'x-sunset': '2027-01-01T00:00:00.000Z' });
    fixture.gateway.setNextPolicy({ ...designPolicyFile, versions: [{ ...designPolicyFile.versions[0], sunset: '2027-03-01T00:00:00Z' }, designPolicyFile.versions[1]] });
    expect((await (await fixture.gateway.admin()).inject({ method: 'POST', url: '/-/reload' })).statusCode).toBe(200);
    expect((await get('/v1/openapi.json')).json()).toMatchObject({ 'x-sunset': '2027-03-01T00:00:00.000Z' });
  });

  it('answers HEAD without a body', async () => {
    const res = await request('HEAD', '/v1/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });
});
