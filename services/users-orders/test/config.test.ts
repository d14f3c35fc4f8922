import { describe, expect, it } from 'vitest';
import { ConfigError } from '@version-router/platform/config';
import { loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    expect(loadConfig({})).toStrictEqual({
      host: '127.0.0.1',
      port: 8081,
      adminHost: '127.0.0.1',
      adminPort: 9465,
      seedDir: 'ops/seed',
      ordersFile: 'ops/seed/orders.json',
      shutdownDelayMs: 0,
      logLevel: 'info',
      database: undefined,
      adminToken: undefined,
      tracing: undefined,
    });
  });

  it.each([
    [
      { DATABASE_URL: 'postgres://app:s3cret@db:5432/users' },
      { url: 'postgres://app:s3cret@db:5432/users', poolMax: 10, migrationTimeoutMs: 600_000, migrations: 'apply' },
    ],
    [
      { DATABASE_URL: 'postgresql://db/users', DATABASE_POOL_MAX: '100' },
      { url: 'postgresql://db/users', poolMax: 100, migrationTimeoutMs: 600_000, migrations: 'apply' },
    ],
    [
      { DATABASE_URL: 'postgres:///users?host=/run/postgresql', DATABASE_POOL_MAX: '1' },
      { url: 'postgres:///users?host=/run/postgresql', poolMax: 1, migrationTimeoutMs: 600_000, migrations: 'apply' },
    ],
    [
      { DATABASE_URL: 'postgres://db/users', DATABASE_MIGRATION_TIMEOUT_MS: '1000' },
      { url: 'postgres://db/users', poolMax: 10, migrationTimeoutMs: 1_000, migrations: 'apply' },
    ],
    [
      { DATABASE_URL: 'postgres://db/users', DATABASE_MIGRATIONS: 'check' },
      { url: 'postgres://db/users', poolMax: 10, migrationTimeoutMs: 600_000, migrations: 'check' },
    ],
    [
      { DATABASE_URL: 'postgres://db/users', DATABASE_MIGRATION_TIMEOUT_MS: '86400000' },
      { url: 'postgres://db/users', poolMax: 10, migrationTimeoutMs: 86_400_000, migrations: 'apply' },
    ],
  ])('reads the users database from %j', (env, database) => {
    expect(loadConfig(env).database).toEqual(database);
  });

  it('reads the orders from SEED_DIR unless ORDERS_FILE names their file', () => {
    expect(loadConfig({ SEED_DIR: '/data/seed' })).toMatchObject({
      seedDir: '/data/seed',
      ordersFile: '/data/seed/orders.json',
    });
    expect(loadConfig({ SEED_DIR: '/data/seed', ORDERS_FILE: '/data/o.json' })).toMatchObject({
      seedDir: '/data/seed',
      ordersFile: '/data/o.json',
    });
  });

  it('keeps the in-memory store for an empty DATABASE_URL', () => {
    expect(loadConfig({ DATABASE_URL: '' }).database).toBeUndefined();
  });

  it.each(['0', '101', '1.5', '-1', 'ten', ''])('throws a ConfigError naming DATABASE_POOL_MAX for %j', (value) => {
    expect(() => loadConfig({ DATABASE_POOL_MAX: value })).toThrow(
      /^DATABASE_POOL_MAX: must be an integer from 1 to 100 /,
    );
  });

  it.each(['999', '86400001', '1.5', '-1', 'ten', ''])(
    'throws a ConfigError naming DATABASE_MIGRATION_TIMEOUT_MS for %j',
    (value) => {
      expect(() => loadConfig({ DATABASE_MIGRATION_TIMEOUT_MS: value })).toThrow(
        new ConfigError(
          `DATABASE_MIGRATION_TIMEOUT_MS: must be a whole number of milliseconds from 1000 to 86400000 (got ` +
            `${JSON.stringify(value)})`,
        ),
      );
    },
  );

  it.each(['migrate', 'CHECK', ''])('throws a ConfigError naming DATABASE_MIGRATIONS for %j', (value) => {
    expect(() => loadConfig({ DATABASE_MIGRATIONS: value })).toThrow(
      new ConfigError(`DATABASE_MIGRATIONS: must be apply or check (got ${JSON.stringify(value)})`),
    );
  });

  it.each([
    [
      'not a URL',
      'not a url s3cret',
      'DATABASE_URL: must be a URL like postgres://user:password@host:5432/database (value not shown: it may hold a ' +
        'password)',
    ],
    [
      'a URL without a host but with a password',
      'postgres://app:s3cret@/users',
      'DATABASE_URL: must be a URL like postgres://user:password@host:5432/database (value not shown: it may hold a ' +
        'password)',
    ],
    [
      'another scheme',
      'mysql://app:s3cret@db/users',
      'DATABASE_URL: must start with postgres:// or postgresql:// (got "mysql://app:***@db/users")',
    ],
    ['no host', 'postgres:///users', 'DATABASE_URL: must name a host (got "postgres:///users")'],
  ])('throws a ConfigError naming DATABASE_URL for %s, never with its password', (_what, value, message) => {
    expect(() => loadConfig({ DATABASE_URL: value })).toThrow(new ConfigError(message));
    expect(message).not.toContain('s3cret');
  });

  it('reads every variable', () => {
    const env = {
      BACKEND_HOST: '0.0.0.0',
      BACKEND_PORT: '0',
      BACKEND_ADMIN_HOST: '0.0.0.0',
      BACKEND_ADMIN_PORT: '65535',
      SEED_DIR: '/data',
      ORDERS_FILE: '/data/o.json',
      SHUTDOWN_DELAY_MS: '30000',
      LOG_LEVEL: 'silent',
    };
    expect(loadConfig(env)).toEqual({
      host: '0.0.0.0',
      port: 0,
      adminHost: '0.0.0.0',
      adminPort: 65535,
      seedDir: '/data',
      ordersFile: '/data/o.json',
      shutdownDelayMs: 30_000,
      logLevel: 'silent',
    });
  });

  it('reads ADMIN_TOKEN (16 characters at least) for the admin listener', () => {
    expect(loadConfig({ ADMIN_TOKEN: 'a-token-of-16-ch' }).adminToken).toBe('a-token-of-16-ch');
    expect(loadConfig({ ADMIN_TOKEN: '' }).adminToken).toBeUndefined();
    expect(() => loadConfig({ ADMIN_TOKEN: 'a-token-of-15-c' })).toThrow(
      new ConfigError('ADMIN_TOKEN: must be at least 16 characters (got 15; value not shown)'),
    );
  });

  it.each([
    ['BACKEND_PORT', 'abc'],
    ['BACKEND_PORT', '-1'],
    ['BACKEND_PORT', '65536'],
    ['BACKEND_ADMIN_PORT', '8080x'],
    ['BACKEND_HOST', ''],
    ['BACKEND_ADMIN_HOST', ''],
    ['SEED_DIR', ''],
    ['ORDERS_FILE', ''],
    ['LOG_LEVEL', 'loud'],
    ['SHUTDOWN_DELAY_MS', '5s'],
  ])('throws a ConfigError naming %s for %j', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}: `));
  });
});
