import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { configErrorOf } from './support/helpers.js';

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
      notices: { email: undefined, intervalMs: 60_000, publicBaseUrl: undefined, sendTimeoutMs: 10_000 },
      translationMaxBytes: 1_048_576,
      translationMaxDepth: 64,
      translationMaxInflightBytes: 67_108_864,
      consumerKeysUrl: undefined,
      queryKeyParameters: ['api_key', 'apiKey', 'key', 'token'],
      pinChangesPerMinute: 10,
      clockStartMs: undefined,
    });
  });

  it('takes GATEWAY_CLOCK_START as a date or a date-time with offset, outside production', () => {
    expect(loadConfig({ GATEWAY_CLOCK_START: '2029-10-03' }).clockStartMs).toBe(Date.parse('2029-10-03T00:00:00Z'));
    expect(loadConfig({ GATEWAY_CLOCK_START: '2029-10-03T14:00:00+02:00', NODE_ENV: 'development' }).clockStartMs).toBe(
      Date.parse('2029-10-03T12:00:00Z'),
    );
    expect(loadConfig({ GATEWAY_CLOCK_START: '', NODE_ENV: 'production' }).clockStartMs).toBeUndefined();
    expect(errorOf({ GATEWAY_CLOCK_START: 'next tuesday' })).toBe(
      'GATEWAY_CLOCK_START: must be a date (2026-06-01) or an RFC 3339 date-time (2027-01-01T00:00:00Z) (got ' +
        '"next tuesday")',
    );
    expect(errorOf({ GATEWAY_CLOCK_START: '2029-10-03', NODE_ENV: 'production' })).toBe(
      'GATEWAY_CLOCK_START: moves the clock for a rehearsal and is refused with NODE_ENV=production (unset it; ' +
        'GET /versions?at= previews a date in production)',
    );
  });

  it('takes CONSUMER_KEYS_URL, the page a 401 names for getting an API key', () => {
    expect(loadConfig({ CONSUMER_KEYS_URL: 'https://developer.example.com/keys' }).consumerKeysUrl).toBe(
      'https://developer.example.com/keys',
    );
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
      DATABASE_MIGRATIONS: 'check',
      GATEWAY_DATA_DIR: '/var/lib/gateway',
      SMTP_URL: 'smtps://notices:p4ss@mail.example.com:465',
      NOTICE_FROM: 'API team <api@example.com>',
      NOTICES_INTERVAL_MS: '30000',
      NOTICES_SEND_TIMEOUT_MS: '2500',
      PUBLIC_BASE_URL: 'https://api.example.com/gateway/',
      TRANSLATION_MAX_BYTES: '65536',
      QUERY_KEY_PARAMETERS: 'api_key, access_token,x-key',
      PIN_CHANGES_PER_MINUTE: '3',
      GATEWAY_CLOCK_START: '2029-10-03T12:00:00Z',
      TRANSLATION_MAX_DEPTH: '32',
      TRANSLATION_MAX_INFLIGHT_BYTES: '1048576',
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
      database: {
        url: 'postgres://gw:s3cret@db:5432/fleet',
        poolMax: 4,
        migrationTimeoutMs: 600_000,
        migrations: 'check',
      },
      dataDir: '/var/lib/gateway',
      notices: {
        email: {
          smtpUrl: 'smtps://notices:p4ss@mail.example.com:465',
          from: { name: 'API team', address: 'api@example.com' },
        },
        intervalMs: 30_000,
        publicBaseUrl: 'https://api.example.com/gateway',
        sendTimeoutMs: 2_500,
      },
      translationMaxBytes: 65_536,
      queryKeyParameters: ['api_key', 'access_token', 'x-key'],
      pinChangesPerMinute: 3,
      clockStartMs: Date.parse('2029-10-03T12:00:00Z'),
      translationMaxDepth: 32,
      translationMaxInflightBytes: 1_048_576,
    });
  });

  it('takes NOTICE_FROM as a bare address too, and plain smtp:// (MailDev, a relay on the host)', () => {
    expect(
      loadConfig({ SMTP_URL: 'smtp://maildev:1025', NOTICE_FROM: 'api-versions@example.com' }).notices.email,
    ).toEqual({
      smtpUrl: 'smtp://maildev:1025',
      from: { name: '', address: 'api-versions@example.com' },
    });
    expect(
      loadConfig({ SMTP_URL: 'smtp://127.0.0.1:25/', NOTICE_FROM: '"Versions, API" <v@example.com>' }).notices.email
        ?.from,
    ).toEqual({
      name: 'Versions, API',
      address: 'v@example.com',
    });
  });

  it('checks NOTICE_FROM without SMTP_URL too, and sends no e-mail then', () => {
    expect(loadConfig({ NOTICE_FROM: 'api@example.com' }).notices.email).toBeUndefined();
    expect(errorOf({ NOTICE_FROM: 'api at example' })).toMatch(/^NOTICE_FROM: /);
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
    [{ TRANSLATION_MAX_BYTES: '1MiB' }, /^TRANSLATION_MAX_BYTES: must be a whole number of bytes \(got "1MiB"\)$/],
    [{ TRANSLATION_MAX_BYTES: '1023' }, /^TRANSLATION_MAX_BYTES: must be between 1024 and 67108864 bytes/],
    [{ TRANSLATION_MAX_DEPTH: 'deep' }, /^TRANSLATION_MAX_DEPTH: must be a whole number of levels \(got "deep"\)$/],
    [{ TRANSLATION_MAX_DEPTH: '0' }, /^TRANSLATION_MAX_DEPTH: must be between 1 and 1000 levels \(got "0"\)$/],
    [{ TRANSLATION_MAX_DEPTH: '1001' }, /^TRANSLATION_MAX_DEPTH: must be between 1 and 1000 levels/],
    [
      { TRANSLATION_MAX_INFLIGHT_BYTES: '64MiB' },
      /^TRANSLATION_MAX_INFLIGHT_BYTES: must be a whole number of bytes \(got "64MiB"\)$/,
    ],
    [
      { TRANSLATION_MAX_INFLIGHT_BYTES: '4294967297' },
      /^TRANSLATION_MAX_INFLIGHT_BYTES: must be between 1024 and 4294967296 bytes/,
    ],
    [
      { TRANSLATION_MAX_INFLIGHT_BYTES: '65536' },
      /^TRANSLATION_MAX_INFLIGHT_BYTES: must be at least TRANSLATION_MAX_BYTES \(1048576\) \(got "65536"\)$/,
    ],
    [{ API_VERSIONS_FILE: '' }, /^API_VERSIONS_FILE: must name a file \(got ""\)$/],
    [
      { QUERY_KEY_PARAMETERS: '' },
      /^QUERY_KEY_PARAMETERS: must be a comma-separated list of query parameter names such as api_key,token \(got ""\)$/,
    ],
    [{ QUERY_KEY_PARAMETERS: 'api_key,,token' }, /^QUERY_KEY_PARAMETERS: must be a comma-separated list/],
    [{ QUERY_KEY_PARAMETERS: 'api key' }, /^QUERY_KEY_PARAMETERS: must be a comma-separated list/],
    [{ QUERY_KEY_PARAMETERS: 'key=1' }, /^QUERY_KEY_PARAMETERS: must be a comma-separated list/],
    [{ PIN_CHANGES_PER_MINUTE: '0' }, /^PIN_CHANGES_PER_MINUTE: must be a whole number from 1 to 600 \(got "0"\)$/],
    [{ PIN_CHANGES_PER_MINUTE: '601' }, /^PIN_CHANGES_PER_MINUTE: must be a whole number from 1 to 600 \(got "601"\)$/],
    [{ PIN_CHANGES_PER_MINUTE: 'ten' }, /^PIN_CHANGES_PER_MINUTE: must be a whole number from 1 to 600 \(got "ten"\)$/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: /],
    [{ API_VERSIONS_WATCH: 'no' }, /^API_VERSIONS_WATCH: must be true or false \(got "no"\)$/],
    [{ API_VERSIONS_WATCH: '' }, /^API_VERSIONS_WATCH: must be true or false \(got ""\)$/],
    [{ SHUTDOWN_DELAY_MS: '-1' }, /^SHUTDOWN_DELAY_MS: must be a whole number of milliseconds \(got "-1"\)$/],
    [{ SHUTDOWN_DELAY_MS: '2.5' }, /^SHUTDOWN_DELAY_MS: must be a whole number of milliseconds/],
    [{ SHUTDOWN_DELAY_MS: '30001' }, /^SHUTDOWN_DELAY_MS: must be at most 30000 ms \(got "30001"\)$/],
    [{ ADMIN_TOKEN: '15-characters-x' }, /^ADMIN_TOKEN: must be at least 16 characters \(got 15; value not shown\)$/],
    [{ ADMIN_TOKEN: 'sixteen chars ok' }, /^ADMIN_TOKEN: must be printable ASCII without spaces \(value not shown\)$/],
    [
      { DATABASE_URL: 'mysql://gw:s3cret@db/fleet' },
      /^DATABASE_URL: must start with postgres:\/\/ or postgresql:\/\/ \(got "mysql:\/\/gw:\*\*\*@db\/fleet"\)$/,
    ],
    [
      { DATABASE_URL: 'not a url s3cret' },
      /^DATABASE_URL: must be a URL like postgres:\/\/user:password@host:5432\/database \(value not shown: it may hold a password\)$/,
    ],
    [{ DATABASE_POOL_MAX: '101' }, /^DATABASE_POOL_MAX: must be an integer from 1 to 100 \(got "101"\)$/],
    [{ GATEWAY_DATA_DIR: '' }, /^GATEWAY_DATA_DIR: must name a directory \(got ""\)$/],
    [
      { CONSUMER_KEYS_URL: 'developer.example.com/keys' },
      /^CONSUMER_KEYS_URL: must be an http:\/\/ or https:\/\/ URL such as https:\/\/developer.example.com\/keys/,
    ],
    [{ CONSUMER_KEYS_URL: 'https://example.com/a>b' }, /^CONSUMER_KEYS_URL: must not contain spaces, <, > or quotes/],
    [
      { SMTP_URL: 'http://mail:25', NOTICE_FROM: 'a@example.com' },
      /^SMTP_URL: must start with smtp:\/\/ or smtps:\/\/ \(got "http:\/\/mail:25\/"\)$/,
    ],
    [
      { SMTP_URL: 'smtp://mail', NOTICE_FROM: 'a@example.com' },
      /^SMTP_URL: must name a port, e.g. smtp:\/\/mail.example.com:25 \(got "smtp:\/\/mail"\)$/,
    ],
    [
      { SMTP_URL: 'smtp://u:s3cret@mail', NOTICE_FROM: 'a@example.com' },
      /^SMTP_URL: must name a port, e.g. smtp:\/\/mail.example.com:25 \(got "smtp:\/\/u:\*\*\*@mail"\)$/,
    ],
    [
      { SMTP_URL: 'smtp://:25', NOTICE_FROM: 'a@example.com' },
      /^SMTP_URL: must be smtp:\/\/host:port or smtps:\/\/host:port \(value not shown/,
    ],
    [
      { SMTP_URL: 'smtp://mail:99999', NOTICE_FROM: 'a@example.com' },
      /^SMTP_URL: must be smtp:\/\/host:port or smtps:\/\/host:port \(value not shown/,
    ],
    [
      { SMTP_URL: 'smtp://mail:25?pool=true', NOTICE_FROM: 'a@example.com' },
      /^SMTP_URL: must end at the port \(no path, query or fragment\)/,
    ],
    [
      { SMTP_URL: 'mail.example.com:25', NOTICE_FROM: 'a@example.com' },
      /^SMTP_URL: must start with smtp:\/\/ or smtps:\/\//,
    ],
    [
      { SMTP_URL: 'smtp://mail:25' },
      /^NOTICE_FROM: must be set when SMTP_URL is \(the address the notices come from\)$/,
    ],
    [
      { SMTP_URL: 'smtp://mail:25', NOTICE_FROM: 'not an address' },
      /^NOTICE_FROM: must be one e-mail address, optionally with a name: "API team <api@example.com>" \(got "not an address"\)$/,
    ],
    [
      { SMTP_URL: 'smtp://mail:25', NOTICE_FROM: 'a@example.com, b@example.com' },
      /^NOTICE_FROM: must be one e-mail address/,
    ],
    [{ SMTP_URL: 'smtp://mail:25', NOTICE_FROM: 'API <api@>' }, /^NOTICE_FROM: must be one e-mail address/],
    [{ NOTICES_INTERVAL_MS: '999' }, /^NOTICES_INTERVAL_MS: must be between 1000 and 3600000 ms \(got "999"\)$/],
    [{ NOTICES_INTERVAL_MS: '3600001' }, /^NOTICES_INTERVAL_MS: must be between 1000 and 3600000 ms/],
    [{ NOTICES_INTERVAL_MS: '1m' }, /^NOTICES_INTERVAL_MS: must be a whole number of milliseconds \(got "1m"\)$/],
    [{ NOTICES_SEND_TIMEOUT_MS: '999' }, /^NOTICES_SEND_TIMEOUT_MS: must be between 1000 and 60000 ms \(got "999"\)$/],
    [{ NOTICES_SEND_TIMEOUT_MS: '60001' }, /^NOTICES_SEND_TIMEOUT_MS: must be between 1000 and 60000 ms/],
    [
      { NOTICES_SEND_TIMEOUT_MS: '10s' },
      /^NOTICES_SEND_TIMEOUT_MS: must be a whole number of milliseconds \(got "10s"\)$/,
    ],
    [
      { PUBLIC_BASE_URL: 'api.example.com' },
      /^PUBLIC_BASE_URL: must be an http:\/\/ or https:\/\/ URL such as https:\/\/api.example.com \(got "api.example.com"\)$/,
    ],
    [
      { PUBLIC_BASE_URL: 'https://api.example.com/?x=1' },
      /^PUBLIC_BASE_URL: must have no query, fragment or credentials/,
    ],
  ])('rejects %j with a one-line message naming the variable', (env, expected) => {
    expect(errorOf(env)).toMatch(expected);
  });
});
