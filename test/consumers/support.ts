import { spawn } from 'node:child_process';
import { expect } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import type { ServiceProcess } from '../../platform/test/support/service-process.js';

/** Registers a consumer on a gateway's admin listener and issues it a key; answers the key. */
export async function consumerWithKey(
  gateway: ServiceProcess,
  name: string,
  headers: Record<string, string> = {},
): Promise<{ id: string; keyId: string; key: string }> {
  const created = await fetch(`${gateway.adminUrl}/consumers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ name }),
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const issued = await fetch(`${gateway.adminUrl}/consumers/${id}/keys`, { method: 'POST', headers });
  expect(issued.status).toBe(201);
  const { key_id: keyId, key } = (await issued.json()) as { key_id: string; key: string };
  return { id, keyId, key };
}

/** The status of GET `path` on a gateway's API port with the key. */
export async function statusWith(gateway: ServiceProcess, key: string, path = '/v2/orders/ord-1001'): Promise<number> {
  return (await fetch(`${gateway.apiUrl}${path}`, { headers: { 'api-key': key } })).status;
}

/** Runs `npm run consumers -- …args` against a gateway's admin listener: exit code, stdout, stderr. */
export function consumersCli(
  adminUrl: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'consumers', '--', ...args], {
      cwd: repoRoot,
      env: { ...process.env, GATEWAY_ADMIN_URL: adminUrl, ADMIN_TOKEN: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
