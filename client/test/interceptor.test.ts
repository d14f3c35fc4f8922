import { createServer } from 'node:net';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deprecationInterceptor, type DeprecationReport } from '../src/undici.js';
import {
  BROWNOUT_START,
  designPolicyFile,
  lifecyclePolicyFile,
  V1_SUNSET,
} from '../../gateway/test/support/helpers.js';
import { requestsTo, startLiveGateway, type LiveGateway } from './live-gateway.js';

let live: LiveGateway;
beforeAll(async () => {
  live = await startLiveGateway();
});
afterAll(async () => {
  await live.close();
});

describe('deprecationInterceptor against the gateway', () => {
  it("reports once for many ids through undici's request(), the body passing through untouched", async () => {
    const reports: DeprecationReport[] = [];
    const versionsBefore = requestsTo(live, '/versions');
    const agent = new Agent().compose(deprecationInterceptor({ onDeprecation: (report) => reports.push(report) }));
    try {
      for (let id = 1; id <= 30; id += 1) {
        const res = await request(`${live.url}/v1/orders/ord-${id}`, {
          dispatcher: agent,
          headers: { 'api-key': live.key },
        });
        expect(res.statusCode).toBe(200);
        expect(await res.body.json()).toEqual({});
      }
      await vi.waitFor(() => expect(reports).toHaveLength(1));
      expect(reports[0]).toEqual({
        method: 'GET',
        url: `${live.url}/v1/orders/ord-1`,
        operation: 'GET /v1/orders/{id}',
        version: 1,
        sunset: new Date('2027-01-01T00:00:00.000Z'),
        successor: `${live.url}/v2/orders/ord-1`,
        changes: `${live.url}/versions/1/changes`,
        removed: false,
      });
      expect(requestsTo(live, '/versions') - versionsBefore).toBe(1);
      await (await request(`${live.url}/v2/orders/ord-1`, { dispatcher: agent })).body.dump();
      expect(reports).toHaveLength(1);
    } finally {
      await agent.close();
    }
  });

  it("works under undici's fetch", async () => {
    const reports: DeprecationReport[] = [];
    const agent = new Agent().compose(deprecationInterceptor({ onDeprecation: (report) => reports.push(report) }));
    try {
      for (const id of [1, 2, 3]) {
        const res = await undiciFetch(`${live.url}/orders/ord-${id}`, {
          dispatcher: agent,
          headers: { 'API-Version': '1' },
        });
        expect(res.headers.get('deprecation')).toBe('true');
        await res.arrayBuffer();
      }
      await vi.waitFor(() => expect(reports).toHaveLength(1));
      expect(reports[0]).toMatchObject({
        operation: 'GET /orders/{id}',
        version: 1,
        successor: `${live.url}/v2/orders/ord-1`,
      });
    } finally {
      await agent.close();
    }
  });

  it("passes a request's failure on to its caller as undici's error, and reports nothing", async () => {
    // A loopback port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const reports: DeprecationReport[] = [];
    const agent = new Agent().compose(deprecationInterceptor({ onDeprecation: (report) => reports.push(report) }));
    try {
      await expect(request(`http://127.0.0.1:${port}/v1/orders/ord-1`, { dispatcher: agent })).rejects.toMatchObject({
        code: 'ECONNREFUSED',
      });
      expect(reports).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it(
    "takes the version from the request's API-Version, in each form undici takes headers, when the answer names " +
      'none',
    async () => {
      // A brownout's 410 is the gateway's own answer: no API-Version on it, and the header form has none in its path.
      const brownout = await startLiveGateway({ policy: lifecyclePolicyFile, now: BROWNOUT_START });
      const reports: DeprecationReport[] = [];
      const agent = new Agent().compose(deprecationInterceptor({ onDeprecation: (report) => reports.push(report) }));
      try {
        const forms = [{ 'api-version': '1' }, ['API-Version', '1'], new Map([['Api-Version', '1']])] as const;
        for (const [index, headers] of forms.entries()) {
          const method = (['GET', 'HEAD', 'DELETE'] as const)[index];
          const res = await request(`${brownout.url}/orders/ord-1`, {
            dispatcher: agent,
            method,
            headers: headers as never,
          });
          expect(res.statusCode).toBe(410);
          expect(res.headers['api-version']).toBeUndefined();
          await res.body.dump();
        }
        await vi.waitFor(() => expect(reports).toHaveLength(3));
        expect(reports.map(({ operation, version }) => `${operation} v${version}`).sort()).toEqual([
          'DELETE /orders/{id} v1',
          'GET /orders/{id} v1',
          'HEAD /orders/{id} v1',
        ]);
      } finally {
        await agent.close();
        await brownout.close();
      }
    },
  );

  it("reports a removed version's 410, which carries Sunset but no Deprecation, as removed", async () => {
    const removed = await startLiveGateway({ policy: designPolicyFile, now: V1_SUNSET });
    const reports: DeprecationReport[] = [];
    const agent = new Agent().compose(deprecationInterceptor({ onDeprecation: (report) => reports.push(report) }));
    try {
      for (const id of [1, 2]) {
        const res = await request(`${removed.url}/v1/orders/ord-${id}`, { dispatcher: agent });
        expect(res.statusCode).toBe(410);
        expect(res.headers.deprecation).toBeUndefined();
        expect(res.headers.sunset).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
        await res.body.dump();
      }
      await vi.waitFor(() => expect(reports).toHaveLength(1));
      expect(reports[0]).toEqual({
        method: 'GET',
        url: `${removed.url}/v1/orders/ord-1`,
        operation: 'GET /v1/orders/{id}',
        version: 1,
        sunset: new Date('2027-01-01T00:00:00.000Z'),
        successor: `${removed.url}/v2/orders/ord-1`,
        changes: `${removed.url}/versions/1/changes`,
        removed: true,
      });
    } finally {
      await agent.close();
      await removed.close();
    }
  });
});
