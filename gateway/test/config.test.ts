import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@version-router/platform/config';
import { loadConfig } from '../src/config.js';
import { designPolicyFile } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'gateway-config-'));
function policyFile(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}
const validPolicy = policyFile('valid.json', designPolicyFile);

function errorOf(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig({ API_VERSIONS_FILE: validPolicy, ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  return 'no error';
}

describe('gateway configuration', () => {
  it('applies the documented defaults (the policy from ops/versions.json, relative to the repository root)', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      adminHost: '127.0.0.1',
      adminPort: 9464,
      backendUrl: 'http://127.0.0.1:8081',
      backendTimeoutMs: 9000,
      logLevel: 'info',
    });
    expect(config.policyFile.default_version).toBe(1);
    expect(config.policyFile.versions.map(({ version }) => version)).toEqual([1, 2]);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_ADMIN_HOST: '0.0.0.0',
      GATEWAY_ADMIN_PORT: '9999',
      BACKEND_URL: 'http://backend:8081/',
      BACKEND_TIMEOUT_MS: '250',
      API_VERSIONS_FILE: validPolicy,
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({ host: '127.0.0.1', port: 0, adminHost: '0.0.0.0', adminPort: 9999, backendUrl: 'http://backend:8081', backendTimeoutMs: 250, logLevel: 'warn' });
  });

  it.each([
    [{ GATEWAY_PORT: 'eighty' }, /^GATEWAY_PORT: must be a port number/],
    [{ GATEWAY_ADMIN_PORT: '70000' }, /^GATEWAY_ADMIN_PORT: must be a port number/],
    [{ GATEWAY_HOST: '' }, /^GATEWAY_HOST: must not be empty/],
    [{ GATEWAY_ADMIN_HOST: '' }, /^GATEWAY_ADMIN_HOST: must not be empty/],
    [{ BACKEND_URL: 'backend:8081' }, /^BACKEND_URL: must use http:\/\//],
    [{ BACKEND_URL: 'not a url' }, /^BACKEND_URL: must be an http:\/\/ URL/],
    [{ BACKEND_URL: 'https://backend:8081' }, /^BACKEND_URL: must use http:\/\//],
    [{ BACKEND_URL: 'http://backend:8081/api' }, /^BACKEND_URL: must be an origin only/],
    [{ BACKEND_TIMEOUT_MS: '9.5' }, /^BACKEND_TIMEOUT_MS: must be a whole number of milliseconds/],
    [{ BACKEND_TIMEOUT_MS: '0' }, /^BACKEND_TIMEOUT_MS: must be between 1 and 9000 ms/],
    [{ BACKEND_TIMEOUT_MS: '12000' }, /^BACKEND_TIMEOUT_MS: must be between 1 and 9000 ms/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: /],
  ])('rejects %j with a one-line message naming the variable', (env, expected) => {
    expect(errorOf(env)).toMatch(expected);
  });

  it('names the policy file and the problem when it is missing, not JSON, or breaks a lifecycle rule', () => {
    const missing = join(dir, 'absent.json');
    expect(errorOf({ API_VERSIONS_FILE: missing })).toBe(`API_VERSIONS_FILE: cannot read ${missing} (ENOENT)`);
    const broken = policyFile('broken.json', '{ "default_version": ');
    expect(errorOf({ API_VERSIONS_FILE: broken })).toMatch(new RegExp(`^API_VERSIONS_FILE: ${broken} is not valid JSON`));
    const early = policyFile('early.json', {
      ...designPolicyFile,
      versions: [{ version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2026-09-01T00:00:00Z', successor: 2 }, { version: 2, status: 'current' }],
    });
    expect(errorOf({ API_VERSIONS_FILE: early })).toBe(
      `API_VERSIONS_FILE: ${early} is invalid at versions.0.sunset: version 1: sunset 2026-09-01T00:00:00.000Z is less than 6 calendar months after announced 2026-06-01T00:00:00.000Z (earliest 2026-12-01T00:00:00.000Z)`,
    );
    const longBrownout = policyFile('long-brownout.json', {
      ...designPolicyFile,
      versions: [{ ...designPolicyFile.versions[0], brownouts: [{ start: '2026-12-01T00:00:00Z', end: '2026-12-02T00:00:01Z' }] }, designPolicyFile.versions[1]],
    });
    expect(errorOf({ API_VERSIONS_FILE: longBrownout })).toBe(
      `API_VERSIONS_FILE: ${longBrownout} is invalid at versions.0.brownouts.0.end: version 1: brownout 2026-12-01T00:00:00.000Z..2026-12-02T00:00:01.000Z is longer than 24 hours`,
    );
    const noDefault = policyFile('no-default.json', { ...designPolicyFile, default_version: 7 });
    expect(errorOf({ API_VERSIONS_FILE: noDefault })).toBe(`API_VERSIONS_FILE: ${noDefault} is invalid at default_version: default_version 7 is not a listed version`);
  });
});
