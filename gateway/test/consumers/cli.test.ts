import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../scripts/paths.mjs';
import { buildTestGateway, type TestGateway } from '../helpers.js';
import { consumerWithKey, createMemoryConsumerStore } from './memory-store.js';

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

/** A gateway whose admin listener (with ADMIN_TOKEN) listens on loopback; its URL. */
async function adminUrl(): Promise<string> {
  const store = createMemoryConsumerStore();
  await consumerWithKey(store, 'beta', { name: 'Beta' });
  await consumerWithKey(store, 'acme', { name: 'Acme Billing' });
  gateway = await buildTestGateway('http://127.0.0.1:9', { consumerStore: store, adminToken: TOKEN });
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

  it('registers a consumer pinned to the version --version names', async () => {
    const url = await adminUrl();
    const env = { GATEWAY_ADMIN_URL: url, ADMIN_TOKEN: TOKEN };
    const created = await consumers(['create', 'Legacy Mobile', '--version', '1'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ id: 'legacy-mobile', pinned_version: 1 });
    const plain = await consumers(['create', 'Newcomer'], env);
    expect(JSON.parse(plain.stdout)).toMatchObject({ id: 'newcomer', pinned_version: 2 });
    const unknown = await consumers(['create', 'Future', '--version', '3'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('422 unsupported version: versions one may pin: 1, 2\n');
  });

  it('refuses a --version that is not a version number', async () => {
    const result = await consumers(['create', 'Acme', '--version', 'v1'], {});
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe('--version takes a version number, like 1 (got "v1")');
  });

  it('refuses list with an argument', async () => {
    const result = await consumers(['list', 'x'], {});
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe('list takes nothing');
  });
});
