import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { configErrorOf } from './helpers.js';

const errorOf = (env: NodeJS.ProcessEnv): string => configErrorOf(() => loadConfig(env));

describe('gateway configuration', () => {
  it('applies the documented defaults (the policy path ops/versions.json, relative to the working directory)', () => {
    expect(loadConfig({})).toEqual({
      host: '0.0.0.0',
      port: 8080,
      adminHost: '127.0.0.1',
      adminPort: 9464,
      backendUrl: 'http://127.0.0.1:8081',
      backendTimeoutMs: 9000,
      policyPath: 'ops/versions.json',
      watchPolicy: true,
      shutdownDelayMs: 0,
      logLevel: 'info',
      adminToken: undefined,
      database: undefined,
      dataDir: '.data/gateway',
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_ADMIN_HOST: '0.0.0.0',
      GATEWAY_ADMIN_PORT: '9999',
      BACKEND_URL: 'http://backend:8081/',
      BACKEND_TIMEOUT_MS: '250',
      API_VERSIONS_FILE: '/etc/gateway/versions.json',
      API_VERSIONS_WATCH: 'false',
      SHUTDOWN_DELAY_MS: '5000',
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN: 'a-token-of-16-ch',
      DATABASE_URL: 'postgres://gw:s3cret@db:5432/fleet',
      DATABASE_POOL_MAX: '4',
      GATEWAY_DATA_DIR: '/var/lib/gateway',
    });
    expect(config).toEqual({
      host: '127.0.0.1',
      port: 0,
      adminHost: '0.0.0.0',
      adminPort: 9999,
      backendUrl: 'http://backend:8081',
      backendTimeoutMs: 250,
      policyPath: '/etc/gateway/versions.json',
      watchPolicy: false,
      shutdownDelayMs: 5_000,
      logLevel: 'warn',
      adminToken: 'a-token-of-16-ch',
      database: { url: 'postgres://gw:s3cret@db:5432/fleet', poolMax: 4, migrationTimeoutMs: 600_000 },
      dataDir: '/var/lib/gateway',
    });
  });

  it('checks API_VERSIONS_FILE is a path and leaves reading the file to main.ts', () => {
    expect(loadConfig({ API_VERSIONS_FILE: '/no/such/versions.json' }).policyPath).toBe('/no/such/versions.json');
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
    [{ API_VERSIONS_FILE: '' }, /^API_VERSIONS_FILE: must name a file \(got ""\)$/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: /],
    [{ API_VERSIONS_WATCH: 'no' }, /^API_VERSIONS_WATCH: must be true or false \(got "no"\)$/],
    [{ API_VERSIONS_WATCH: '' }, /^API_VERSIONS_WATCH: must be true or false \(got ""\)$/],
    [{ SHUTDOWN_DELAY_MS: '-1' }, /^SHUTDOWN_DELAY_MS: must be a whole number of milliseconds \(got "-1"\)$/],
    [{ SHUTDOWN_DELAY_MS: '2.5' }, /^SHUTDOWN_DELAY_MS: must be a whole number of milliseconds/],
    [{ SHUTDOWN_DELAY_MS: '30001' }, /^SHUTDOWN_DELAY_MS: must be at most 30000 ms \(got "30001"\)$/],
    [{ ADMIN_TOKEN: '15-characters-x' }, /^ADMIN_TOKEN: must be at least 16 characters \(got 15; value not shown\)$/],
    [{ ADMIN_TOKEN: 'sixteen chars ok' }, /^ADMIN_TOKEN: must be printable ASCII without spaces \(value not shown\)$/],
    [{ DATABASE_URL: 'mysql://gw:s3cret@db/fleet' }, /^DATABASE_URL: must start with postgres:\/\/ or postgresql:\/\/ \(got "mysql:\/\/gw:\*\*\*@db\/fleet"\)$/],
    [{ DATABASE_URL: 'not a url s3cret' }, /^DATABASE_URL: must be a URL like postgres:\/\/user:password@host:5432\/database \(value not shown: it may hold a password\)$/],
    [{ DATABASE_POOL_MAX: '101' }, /^DATABASE_POOL_MAX: must be an integer from 1 to 100 \(got "101"\)$/],
    [{ GATEWAY_DATA_DIR: '' }, /^GATEWAY_DATA_DIR: must name a directory \(got ""\)$/],
  ])('rejects %j with a one-line message naming the variable', (env, expected) => {
    expect(errorOf(env)).toMatch(expected);
  });
});
