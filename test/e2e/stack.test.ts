import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { startGateway, startProcessStack, type ProcessStack } from './process-stack.js';
import { type ServiceProcess } from '../../platform/test/support/service-process.js';
import { registerScenarios } from './scenarios.js';

/**
 * The real built processes (`npm run build` first), as `npm start` runs them, on ephemeral loopback
 * ports. Runs the shared scenarios, then what needs process control: a policy past its sunset (a
 * second gateway on a fixture policy), the consumer log, the backend stopped, and SIGTERM.
 */
let stack: ProcessStack;

beforeAll(async () => {
  stack = await startProcessStack();
});
afterAll(async () => {
  await stack?.stop();
});

/**
 * How long, and how often, a test here looks for a line a process logged (`eventually`): info lines leave in
 * batches, at least every 100 ms (docs/observability.md#logging).
 */
const LOGGED = { timeoutMs: 5_000, intervalMs: 50 };

describe('process stack: shared scenarios', () => {
  registerScenarios(() => stack);
});

describe('process stack: a version past its sunset', () => {
  const removedPolicy = fileURLToPath(new URL('../fixtures/versions-v1-removed.json', import.meta.url));
  let removedGateway: ServiceProcess;
  beforeAll(async () => {
    removedGateway = await startGateway(stack.backend.apiUrl, { API_VERSIONS_FILE: removedPolicy });
  });
  afterAll(async () => {
    await removedGateway?.stop();
  });

  it.each([
    ['/v1/orders/ord-1001', {}, '</v2/orders/ord-1001>; rel="successor-version"'],
    ['/api/v1/orders/ord-1001', {}, '</api/v2/orders/ord-1001>; rel="successor-version"'],
    ['/orders/ord-1001', { 'api-version': '1' }, '</v2/orders/ord-1001>; rel="successor-version"'],
  ])('answers GET %s %j with 410 version_removed, Sunset, Link and Vary', async (path, headers, link) => {
    const res = await fetch(`${removedGateway.apiUrl}${path}`, { headers });
    expect(res.status).toBe(410);
    expect(await res.json()).toEqual({
      error: 'version_removed',
      code: 410,
      details: 'version 1 was removed on Thu, 01 Jan 2026 00:00:00 GMT; use version 2',
    });
    expect(res.headers.get('sunset')).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
    expect(res.headers.get('link')).toBe(link);
    expect(res.headers.get('vary')).toBe('API-Version');
  });

  // Its default_version is v1, removed: a date never stops a start.
  it(
    'starts and stays ready with its default removed: requests that name no version get 410 with the successor ' +
      'link, v2 is served, and the log line, the metric and the counts say why',
    async () => {
      const unnamed = await fetch(`${removedGateway.apiUrl}/orders/ord-1001`);
      expect(unnamed.status).toBe(410);
      expect(await unnamed.json()).toMatchObject({ error: 'version_removed' });
      expect(unnamed.headers.get('link')).toBe('</v2/orders/ord-1001>; rel="successor-version"');
      expect((await fetch(`${removedGateway.apiUrl}/v2/orders/ord-1001`)).status).toBe(200);
      const named = await fetch(`${removedGateway.apiUrl}/orders/ord-1001`, { headers: { 'api-version': '2' } });
      expect(named.headers.get('api-version')).toBe('2');
      expect((await fetch(`${removedGateway.adminUrl}/readyz`)).status).toBe(200);
      expect(removedGateway.logs.filter((line) => line.level === 50)).toEqual([
        expect.objectContaining({
          rule: 'default_version_removed',
          msg:
            'version policy problem default_version_removed: default_version 1 was removed on ' +
            '2026-01-01T00:00:00.000Z: every request that names no version gets 410; set default_version to v2 ' +
            '(its successor) and reload the policy (docs/runbook.md#move-the-default)',
        }),
      ]);
      const metrics = await (await fetch(`${removedGateway.adminUrl}/metrics`)).text();
      expect(metrics).toMatch(/^api_version_policy_problems\{rule="default_version_removed"\} 1$/m);
      expect(metrics).toMatch(
        /^api_version_requests_total\{version="1",deprecated="true",selected_by="path",status_code="410"\} 2$/m,
      );
      expect(metrics).toMatch(
        /^api_version_requests_total\{version="1",deprecated="true",selected_by="header",status_code="410"\} 1$/m,
      );
      expect(metrics).toMatch(
        /^api_version_requests_total\{version="1",deprecated="true",selected_by="default",status_code="410"\} 1$/m,
      );
    },
  );
});

describe('process stack: a gateway on a moved clock (GATEWAY_CLOCK_START)', () => {
  const shipped = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../ops/versions.json', import.meta.url)), 'utf8'),
  ) as { versions: { version: number; sunset?: string }[] };
  const sunset = Date.parse(shipped.versions.find(({ version }) => version === 1)?.sunset ?? '');
  let moved: ServiceProcess;
  beforeAll(async () => {
    moved = await startGateway(stack.backend.apiUrl, {
      GATEWAY_CLOCK_START: new Date(sunset + 86_400_000).toISOString(),
    });
  });
  afterAll(async () => {
    await moved?.stop();
  });

  it("serves the shipped policy as on the day after v1's sunset, and says its clock is moved", async () => {
    expect(moved.logs.find((line) => line.msg?.toString().startsWith('the clock is moved'))).toMatchObject({
      level: 40,
      clockStart: new Date(sunset + 86_400_000).toISOString(),
    });
    const v1 = await fetch(`${moved.apiUrl}/v1/orders/ord-1001`);
    expect(v1.status).toBe(410);
    expect(await v1.json()).toMatchObject({ error: 'version_removed' });
    expect((await fetch(`${moved.apiUrl}/orders/ord-1001`)).headers.get('api-version')).toBe('2');
    const versions = (await (await fetch(`${moved.apiUrl}/versions`)).json()) as { versions: { phase: string }[] };
    expect(versions.versions[0]?.phase).toBe('removed');
    // The machine's clock is untouched: the gateway that runs on it still serves v1.
    expect((await fetch(`${stack.gatewayUrl}/v1/orders/ord-1001`)).status).toBe(200);
  });
});

describe('process stack: consumer log', () => {
  it(
    "logs a deprecated version's request with version, route, status, User-Agent and X-Client-Id on its one " + 'line',
    async () => {
      await fetch(`${stack.gatewayUrl}/api/v1/orders/ord-1002`, {
        headers: { 'user-agent': 'shop-app/3.1', 'x-client-id': 'shop-frontend' },
      });
      await fetch(`${stack.gatewayUrl}/v2/orders/ord-1002`, { headers: { 'user-agent': 'migrated-app/1.0' } });
      // Lines leave in order: once the v2 request's line is here, so is the v1 request's.
      await eventually(
        'the v2 request’s log line',
        () => stack.gateway.logs.find((line) => line.url === '/v2/orders/ord-1002'),
        LOGGED,
      );
      const lines = stack.gateway.logs.filter((line) => line.deprecated === true);
      expect(lines.find((line) => line.clientId === 'shop-frontend')).toMatchObject({
        level: 30,
        msg: 'request completed',
        version: 1,
        route: '/api/v1/orders/:id',
        statusCode: 200,
        userAgent: 'shop-app/3.1',
        clientId: 'shop-frontend',
      });
      expect(lines.some((line) => line.userAgent === 'migrated-app/1.0')).toBe(false);
    },
  );
});

describe('process stack: reloading the version policy', () => {
  const shipped = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../ops/versions.json', import.meta.url)), 'utf8'),
  ) as { versions: { version: number; status: string }[] };
  const listed = shipped.versions.map(({ version }) => version);
  const current = shipped.versions.filter(({ status }) => status === 'current').map(({ version }) => version);
  /** The version the reload adds: one above the highest the shipped policy lists, which the backend does not serve. */
  const added = Math.max(...listed) + 1;
  const policyPath = join(mkdtempSync(join(tmpdir(), 'policy-reload-')), 'versions.json');
  const writePolicy = (policy: unknown) => writeFileSync(policyPath, JSON.stringify(policy));
  let gateway: ServiceProcess;
  beforeAll(async () => {
    writePolicy(shipped);
    // SIGHUP and POST /-/reload only (the file watch has its own tests): with the watch on, its own reload of
    // each write could land before or after the test's reads, which counts and logs it, depending on load.
    gateway = await startGateway(stack.backend.apiUrl, { API_VERSIONS_FILE: policyPath, API_VERSIONS_WATCH: 'false' });
  });
  afterAll(async () => {
    await gateway?.stop();
  });
  const logged = (msg: string) =>
    eventually(`the "${msg}" log line`, () => gateway.logs.find((entry) => entry.msg === msg), LOGGED);

  it('serves a version added to the file after SIGHUP, without a restart', async () => {
    expect((await fetch(`${gateway.apiUrl}/v${added}/orders/ord-1001`)).status).toBe(404);
    writePolicy({ ...shipped, versions: [...shipped.versions, { version: added, status: 'current' }] });
    gateway.child.kill('SIGHUP');
    expect(await logged('version policy reloaded')).toMatchObject({ versions: [...listed, added] });
    // The backend has no such orders: its 404 comes back through the new version, with its headers.
    const res = await fetch(`${gateway.apiUrl}/v${added}/orders/ord-1001`);
    expect(res.status).toBe(404);
    expect(res.headers.get('api-version')).toBe(String(added));
    expect(res.headers.get('api-supported-versions')).toBe([...current, added].join(', '));
    expect(gateway.child.exitCode).toBeNull();
  });

  it(
    'keeps the policy in force when the file turns invalid: SIGHUP logs the reason, POST /-/reload answers ' + 'it',
    async () => {
      writePolicy({ ...shipped, default_version: 9 });
      gateway.child.kill('SIGHUP');
      const line = await logged('version policy reload failed; the previous policy stays in force');
      expect(line).toMatchObject({
        level: 50,
        reason:
          `API_VERSIONS_FILE: ${policyPath} is invalid at default_version: default_version 9 is not a listed ` +
          `version`,
      });
      const res = await fetch(`${gateway.adminUrl}/-/reload`, { method: 'POST' });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: 'invalid version policy',
        code: 400,
        details:
          `API_VERSIONS_FILE: ${policyPath} is invalid at default_version: default_version 9 is not a listed ` +
          `version`,
      });
      expect((await fetch(`${gateway.apiUrl}/v${added}/orders/ord-1001`)).headers.get('api-version')).toBe(
        String(added),
      );
      const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
      expect(metrics).toMatch(/^api_version_policy_reloads_total\{result="failure"\} 2$/m);
      expect(metrics).toMatch(/^api_version_policy_last_reload_success 0$/m);

      writePolicy(shipped);
      const fixed = await fetch(`${gateway.adminUrl}/-/reload`, { method: 'POST' });
      expect(fixed.status).toBe(200);
      expect(await fixed.json()).toEqual({ reloaded: true });
      const removed = await fetch(`${gateway.apiUrl}/v${added}/orders/ord-1001`);
      expect(removed.status).toBe(404);
      expect(removed.headers.get('api-version')).toBeNull();
    },
  );
});

describe('process stack: process control', () => {
  it('answers 502 bad gateway while the backend is down, stays ready and reports backend_up 0', async () => {
    const stopping = Date.now();
    expect(await stack.backend.stop()).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(10_000);
    for (const path of ['/v1/orders/ord-1001', '/api/users']) {
      const res = await fetch(`${stack.gatewayUrl}${path}`);
      expect(res.status).toBe(502);
      const body = await res.text();
      expect(JSON.parse(body)).toEqual({ error: 'bad gateway', code: 502 });
      expect(body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    }
    // Readiness is this replica's own; the dead backend shows in backend_up.
    expect((await fetch(`${stack.gatewayAdminUrl}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${stack.gatewayAdminUrl}/metrics`)).text()).toMatch(/^backend_up 0$/m);
    expect((await fetch(`${stack.gatewayAdminUrl}/healthz`)).status).toBe(200);
  });

  it('stops the gateway within 10 s of SIGTERM with exit code 0 (the backend did above)', async () => {
    const started = Date.now();
    expect(await stack.gateway.stop()).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(stack.gateway.logs.at(-1)?.msg).toBe('stopped');
  });
});
