// The policy in force swapped by a reload (POST /-/reload here; SIGHUP and the file watch take the same path):
// what a reload adds is served at once, an invalid file changes nothing.
import { describe, expect, it } from 'vitest';
import { at, designPolicyFile, stubbedGatewayPerTest } from '../support/helpers.js';

const fixture = stubbedGatewayPerTest();
const request = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
  fixture.gateway.app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
const get = (url: string, headers: Record<string, string> = {}) => request('GET', url, headers);

describe('reloading the policy without a restart', () => {
  const withVersion3 = {
    ...designPolicyFile,
    resources: ['/orders/:id', '/openapi.json', '/invoices/:id'],
    versions: [...designPolicyFile.versions, { version: 3, status: 'current' }],
  };
  const reload = async () => (await fixture.gateway.admin()).inject({ method: 'POST', url: '/-/reload' });

  it('serves a version and a resource added by POST /-/reload, and counts the reload', async () => {
    expect((await get('/v3/orders/ord-1001')).statusCode).toBe(404);
    expect((await get('/v3/invoices/inv-1')).statusCode).toBe(404);
    fixture.gateway.setNextPolicy(withVersion3);
    const res = await reload();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ reloaded: true });

    const served = await get('/v3/orders/ord-1001');
    expect(served.statusCode).toBe(200);
    expect(served.headers).toMatchObject({
      'api-version': '3',
      'api-supported-versions': '2, 3',
      'api-deprecated-versions': '1',
    });
    expect((await get('/orders/inv-1', { 'api-version': '3' })).json<{ url: string }>().url).toBe('/v3/orders/inv-1');
    expect((await get('/api/v3/invoices/inv-1')).json<{ url: string }>().url).toBe('/api/v3/invoices/inv-1');
    expect((await get('/v1/orders/ord-1001', { 'api-version': '3' })).statusCode).toBe(400);
    expect(await fixture.gateway.metricLines('http_requests_total')).toContain(
      'http_requests_total{method="GET",route="/api/v3/invoices/:id",status_code="200"} 1',
    );
    expect(await fixture.gateway.metricLines('api_version_policy_reloads_total')).toEqual([
      'api_version_policy_reloads_total{result="success"} 1',
      'api_version_policy_reloads_total{result="failure"} 0',
    ]);
    expect(await fixture.gateway.metricLines('api_version_policy_last_reload_success')).toEqual([
      'api_version_policy_last_reload_success 1',
    ]);
    expect(fixture.gateway.logs.find((line) => line.msg === 'version policy reloaded')).toMatchObject({
      level: 30,
      versions: [1, 2, 3],
    });
  });

  it("keeps counting a version's requests in the same series across a reload: a counter never goes down", async () => {
    await get('/v2/orders/ord-1001');
    await get('/v2/orders/ord-1001');
    fixture.gateway.setNextPolicy(withVersion3);
    expect((await reload()).statusCode).toBe(200);
    await get('/v2/orders/ord-1001');
    expect(await fixture.gateway.metricLines('api_version_requests_total')).toEqual([
      'api_version_requests_total{version="2",deprecated="false",selected_by="path",status_code="200"} 3',
    ]);
    expect(await fixture.gateway.metricLines('http_requests_total')).toEqual([
      'http_requests_total{method="GET",route="/v2/orders/:id",status_code="200"} 3',
    ]);
  });

  it(
    'keeps the old policy on an invalid file: 400 invalid version policy with the reason, one error line, failure ' +
      'metrics',
    async () => {
      fixture.gateway.setNextPolicy({
        ...designPolicyFile,
        versions: [{ ...designPolicyFile.versions[0], sunset: '2026-09-01T00:00:00Z' }, designPolicyFile.versions[1]],
      });
      const res = await reload();
      expect(res.statusCode).toBe(400);
      const reason =
        'invalid at versions.0.sunset: version 1: sunset 2026-09-01T00:00:00.000Z is less than 6 calendar months ' +
        'after announced 2026-06-01T00:00:00.000Z (earliest 2026-12-01T00:00:00.000Z)';
      expect(res.json()).toEqual({ error: 'invalid version policy', code: 400, details: reason });
      const errors = fixture.gateway.logs.filter((line) => line.level === 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({
        msg: 'version policy reload failed; the previous policy stays in force',
        reason,
      });
      expect((await get('/v1/orders/ord-1001')).headers.sunset).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
      expect(await fixture.gateway.metricLines('api_version_policy_reloads_total')).toContain(
        'api_version_policy_reloads_total{result="failure"} 1',
      );
      expect(await fixture.gateway.metricLines('api_version_policy_last_reload_success')).toEqual([
        'api_version_policy_last_reload_success 0',
      ]);

      fixture.gateway.setNextPolicy(designPolicyFile);
      expect((await reload()).statusCode).toBe(200);
      expect(await fixture.gateway.metricLines('api_version_policy_last_reload_success')).toEqual([
        'api_version_policy_last_reload_success 1',
      ]);
    },
  );

  it('moves the sunset gauge with the reloaded policy', async () => {
    fixture.gateway.setNextPolicy({
      ...designPolicyFile,
      versions: [{ ...designPolicyFile.versions[0], sunset: '2027-03-01T00:00:00Z' }, designPolicyFile.versions[1]],
    });
    await reload();
    expect(await fixture.gateway.metricLines('api_version_sunset_timestamp_seconds')).toEqual([
      `api_version_sunset_timestamp_seconds{version="1"} ${at('2027-03-01T00:00:00Z') / 1000}`,
    ]);
  });

  it('accepts POST only on /-/reload', async () => {
    const res = await (await fixture.gateway.admin()).inject({ method: 'GET', url: '/-/reload' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });
});
