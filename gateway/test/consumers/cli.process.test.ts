import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../scripts/paths.mjs';
import { TODAY, buildTestGateway, designPolicyFile, type TestGateway } from '../support/helpers.js';
import { consumerWithKey, createMemoryConsumerStore } from '../support/memory-store.js';

const CLI = 'gateway/dist/src/consumers/cli.js';
const TOKEN = 'a-sixteen-char-token-x';

/** Runs the built CLI (npm run consumers) with `env`; its exit code and output. */
function consumers(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  expect(existsSync(join(repoRoot, CLI)), `${CLI} missing: run npm run build`).toBe(true);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: repoRoot, env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
});

/**
 * A gateway whose admin listener (with ADMIN_TOKEN, none for `adminToken: null`) listens on loopback; its URL.
 * `adminHost` is the host the listener takes itself to be bound to.
 */
async function adminUrl({
  policy = designPolicyFile,
  adminToken = TOKEN,
  adminHost = '127.0.0.1',
}: { policy?: unknown; adminToken?: string | null; adminHost?: string } = {}): Promise<string> {
  const store = createMemoryConsumerStore();
  await consumerWithKey(store, 'beta', { name: 'Beta' });
  await consumerWithKey(store, 'acme', { name: 'Acme Billing', pinned_version: 1 });
  gateway = await buildTestGateway('http://127.0.0.1:9', {
    consumerStore: store,
    policy,
    adminToken: adminToken ?? undefined,
    adminHost,
  });
  const admin = await gateway.admin();
  await admin.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`;
}

describe('npm run consumers', () => {
  it('lists every registered consumer, by id', async () => {
    const url = await adminUrl();
    const listed = await consumers(['list'], { GATEWAY_ADMIN_URL: url, ADMIN_TOKEN: TOKEN });
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(
      (JSON.parse(listed.stdout) as { consumers: { id: string; name: string }[] }).consumers.map(({ id, name }) => [
        id,
        name,
      ]),
    ).toEqual([
      ['acme', 'Acme Billing'],
      ['beta', 'Beta'],
    ]);
  });

  it('names ADMIN_TOKEN when the admin listener refuses the caller', async () => {
    const url = await adminUrl();
    const without = await consumers(['list'], { GATEWAY_ADMIN_URL: url });
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/^401 .*\(the gateway asks for a token: set ADMIN_TOKEN\)\n$/);
    const wrong = await consumers(['list'], { GATEWAY_ADMIN_URL: url, ADMIN_TOKEN: 'another-sixteen-chars' });
    expect(wrong.stderr).toMatch(/^401 .*\(ADMIN_TOKEN is not the gateway's token\)\n$/);
  });

  it('names GATEWAY_ADMIN_URL when nothing answers there', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise((resolve) => probe.close(resolve));
    const result = await consumers(['list'], { GATEWAY_ADMIN_URL: url });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `fetch failed (ECONNREFUSED at ${url}: is the gateway running? Its banner prints the admin URL; set ` +
        `GATEWAY_ADMIN_URL to it)\n`,
    );
  });

  it('registers a consumer pinned with create --version, and moves a pin with version <id> <n>', async () => {
    const env = { GATEWAY_ADMIN_URL: await adminUrl(), ADMIN_TOKEN: TOKEN };
    const created = await consumers(['create', 'Gamma Co', '--version', '1'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ id: 'gamma-co', name: 'Gamma Co', pinned_version: 1 });
    const moved = await consumers(['version', 'acme', '2'], env);
    expect(moved.stderr).toBe('');
    expect(moved.code).toBe(0);
    expect(JSON.parse(moved.stdout)).toEqual({
      id: 'acme',
      name: 'Acme Billing',
      pinned_version: 2,
      previous_version: 1,
      pinned_at: new Date(TODAY).toISOString(),
      rollback_until: new Date(TODAY + 72 * 3_600_000).toISOString(),
    });
  });

  it('says why the gateway refuses a pin, on one line, exit 1', async () => {
    const env = { GATEWAY_ADMIN_URL: await adminUrl(), ADMIN_TOKEN: TOKEN };
    const unlisted = await consumers(['version', 'acme', '9'], env);
    expect(unlisted).toEqual({ code: 1, stdout: '', stderr: '422 unsupported version: versions one may pin: 1, 2\n' });
    const unknown = await consumers(['version', 'nobody', '2'], env);
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: '404 consumer not found\n' });
    const created = await consumers(['create', 'Delta', '--version', '3'], env);
    expect(created).toEqual({ code: 1, stdout: '', stderr: '422 unsupported version: versions one may pin: 1, 2\n' });
  });

  it('answers a version closed to new consumers 403 naming the successor, not ADMIN_TOKEN', async () => {
    const [v1, v2] = designPolicyFile.versions;
    const closed = { ...v1, consumer_key: 'required', closed_to_new: '2026-09-01' };
    const url = await adminUrl({ policy: { ...designPolicyFile, versions: [closed, v2] } });
    const refusal =
      '403 version closed to new consumers: version 1 takes no new consumers since Tue, 01 Sep 2026 00:00:00 GMT; ' +
      'use version 2\n';
    const env = { GATEWAY_ADMIN_URL: url, ADMIN_TOKEN: TOKEN };
    expect(await consumers(['version', 'beta', '1'], env)).toEqual({ code: 1, stdout: '', stderr: refusal });
    expect(await consumers(['create', 'Eta', '--version', '1'], env)).toEqual({ code: 1, stdout: '', stderr: refusal });
  });

  it('names ADMIN_TOKEN when the admin listener takes no call off loopback without it', async () => {
    const url = await adminUrl({ adminToken: null, adminHost: '0.0.0.0' });
    const result = await consumers(['version', 'acme', '2'], { GATEWAY_ADMIN_URL: url });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      '403 admin token required off loopback (the admin listener is not on loopback: set ADMIN_TOKEN to the ' +
        "gateway's token)\n",
    );
  });

  it.each([
    [['version', 'acme'], 'version takes a consumer id and a version number'],
    [['version', 'acme', 'two'], 'version takes a consumer id and a version number'],
    [['version', 'acme', '1.5'], 'version takes a consumer id and a version number'],
    [['create', 'Zeta', '--version', 'v2'], '--version takes a version number, like 1 (got "v2")'],
    [['show', 'acme', '--version', '2'], 'show takes no options'],
  ])('refuses %j with its usage, exit 2, before calling the gateway', async (args, line) => {
    const result = await consumers(args, {});
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(line);
  });

  it.each([['help'], ['--help'], ['-h']])('prints its usage for %s on stdout, exit 0', async (word) => {
    const result = await consumers([word], {});
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')[0]).toBe('usage: npm run consumers -- <command>');
    expect(result.stdout).toContain('  version <id> <n>');
  });

  it('refuses list with an argument', async () => {
    const result = await consumers(['list', 'x'], {});
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe('list takes nothing');
  });
});
