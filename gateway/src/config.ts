import addressparser from 'nodemailer/lib/addressparser';
import { z } from 'zod';
import {
  ConfigError,
  filePathSchema,
  hostSchema,
  logLevelSchema,
  portSchema,
  readAdminToken,
  readDatabaseConfig,
  readEnv,
  shutdownDelaySchema,
  type DatabaseConfig,
} from '@version-router/platform/config';
import { DEFAULT_QUERY_KEY_PARAMETERS } from '@version-router/platform/http-foundation';
import { serverLimits } from '@version-router/platform/server-limits';
import { readTracingConfig, type TracingConfig } from '@version-router/platform/tracing';
import { DEFAULT_TRANSLATION_MAX_BYTES, DEFAULT_TRANSLATION_MAX_DEPTH } from './translation/limits.js';
import { instant, instantRule } from './versions/policy-file.js';

export interface GatewayConfig {
  host: string;
  port: number;
  /** The admin listener's own address: it names clients and reloads the policy, so loopback unless set. */
  adminHost: string;
  adminPort: number;
  backendUrl: string;
  backendTimeoutMs: number;
  /** API_VERSIONS_FILE: main.ts reads it at start, and again on every reload. */
  policyPath: string;
  /** API_VERSIONS_WATCH: reload the policy file when its content changes, without a signal. */
  watchPolicy: boolean;
  /** SHUTDOWN_DELAY_MS: serve on, reported not ready, this long after SIGTERM before closing the listener. */
  shutdownDelayMs: number;
  logLevel: z.output<typeof logLevelSchema>;
  /** ADMIN_TOKEN: the Bearer token the admin listener asks for (all but /healthz, /readyz, /metrics); unset: none. */
  adminToken: string | undefined;
  /** DATABASE_URL: consumers, keys and their usage in PostgreSQL (schema `gateway`), shared by every replica. */
  database: DatabaseConfig | undefined;
  /** GATEWAY_DATA_DIR: where the embedded store keeps them when DATABASE_URL is unset. */
  dataDir: string;
  notices: NoticesConfig;
  /** TRANSLATION_MAX_BYTES: the largest body read whole to be translated (docs/behaviour.md). */
  translationMaxBytes: number;
  /** TRANSLATION_MAX_DEPTH: the deepest nesting of a JSON body translated. */
  translationMaxDepth: number;
  /** TRANSLATION_MAX_INFLIGHT_BYTES: the bytes all translations in progress hold together. */
  translationMaxInflightBytes: number;
  /** CONSUMER_KEYS_URL: where clients learn how to get an API key; every 401 of a key names it. */
  consumerKeysUrl: string | undefined;
  /** The OTEL_* variables: undefined when tracing is off (docs/tracing.md#turning-tracing-on). */
  tracing: TracingConfig | undefined;
  /** QUERY_KEY_PARAMETERS: query parameters redacted in the log, and refused when they hold an API key. */
  queryKeyParameters: readonly string[];
  /** PIN_CHANGES_PER_MINUTE: a consumer's own pin changes one replica takes in a minute; more are 429. */
  pinChangesPerMinute: number;
  /**
   * GATEWAY_CLOCK_START: the instant the gateway's clock reads at start, advancing in real time from there (a
   * rehearsal of the policy's dates); undefined: the machine's clock. Refused with NODE_ENV=production.
   */
  clockStartMs: number | undefined;
}

/**
 * A mailbox as an e-mail's From names it: `API team <api@example.com>` is `{ name: 'API team', address:
 * 'api@example.com' }`.
 */
export interface Mailbox {
  name: string;
  address: string;
}

/** How the deprecation notices go out (docs/behaviour.md#notices). */
export interface NoticesConfig {
  /** SMTP_URL and NOTICE_FROM: the e-mail channel; undefined without SMTP_URL (no e-mail notices). */
  email: { smtpUrl: string; from: Mailbox } | undefined;
  /** NOTICES_INTERVAL_MS: how often due notices are looked for besides at start and on every policy change. */
  intervalMs: number;
  /** PUBLIC_BASE_URL: what a notice's links start with (no trailing slash); undefined: links are paths on the API. */
  publicBaseUrl: string | undefined;
  /**
   * NOTICES_SEND_TIMEOUT_MS: the longest one e-mail or webhook delivery may take before it counts as failed and is
   * retried.
   */
  sendTimeoutMs: number;
}

/** An http origin (no path, query or credentials): the gateway appends the request's own path. */
const backendUrlSchema = z
  .string()
  .refine((text) => URL.canParse(text), 'must be an http:// URL such as http://127.0.0.1:8081')
  .transform((text) => new URL(text))
  .refine((url) => url.protocol === 'http:', 'must use http://')
  .refine(
    (url) => url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '',
    'must be an origin only (no path, query or credentials)',
  )
  .transform((url) => url.origin);

/**
 * undici checks its header/body timeouts on a ~0.5 s tick, so the 504 leaves up to ~0.5 s after the limit;
 * capped a second below the 10 s write deadline so the client gets the 504 rather than a cut connection.
 */
const MAX_BACKEND_TIMEOUT_MS = serverLimits.writeTimeoutMs - 1_000;
const backendTimeoutSchema = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of milliseconds')
  .transform(Number)
  .refine(
    (ms) => ms >= 1 && ms <= MAX_BACKEND_TIMEOUT_MS,
    `must be between 1 and ${MAX_BACKEND_TIMEOUT_MS} ms (below the write timeout)`,
  );

/** Shown in a message: the URL with its password masked, so a refused value can be recognised without leaking it. */
function shownUrl(url: URL): string {
  const shown = new URL(url.href);
  if (shown.password !== '') shown.password = '***';
  return JSON.stringify(shown.href);
}

/**
 * SMTP_URL: `smtp://host:port` (plain, or STARTTLS when the server offers it) or `smtps://host:port` (TLS from the
 * first byte), with `user:password@` when the server asks for a login. The port is required: nodemailer's default
 * for smtp:// is 587, not the 25 a reader would expect. Nothing after the port: options are ours, not the URL's.
 */
function parseSmtpUrl(raw: string): string {
  if (!URL.canParse(raw))
    throw new ConfigError(
      'SMTP_URL: must be smtp://host:port or smtps://host:port (value not shown: it may hold a password)',
    );
  const url = new URL(raw);
  const fail = (rule: string): never => {
    throw new ConfigError(`SMTP_URL: ${rule} (got ${shownUrl(url)})`);
  };
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') fail('must start with smtp:// or smtps://');
  if (url.hostname === '') fail('must name a host');
  if (url.port === '') fail('must name a port, e.g. smtp://mail.example.com:25');
  if (!['', '/'].includes(url.pathname) || url.search !== '' || url.hash !== '')
    fail('must end at the port (no path, query or fragment)');
  return raw;
}

/** NOTICE_FROM: one address, with a display name or without: `api@example.com`, `API team <api@example.com>`. */
function parseMailbox(raw: string): Mailbox {
  const parsed = addressparser(raw);
  const only = parsed.length === 1 ? parsed[0] : undefined;
  const address = only !== undefined && 'address' in only ? only.address : undefined;
  if (only === undefined || address === undefined || !z.email().safeParse(address).success) {
    throw new ConfigError(
      `NOTICE_FROM: must be one e-mail address, optionally with a name: "API team <api@example.com>" (got ` +
        `${JSON.stringify(raw)})`,
    );
  }
  return { name: only.name, address };
}

/**
 * The shortest and longest NOTICES_INTERVAL_MS: each check reads the store; an hour is the longest a due notice or a
 * retry waits.
 */
const MIN_NOTICES_INTERVAL_MS = 1_000;
const MAX_NOTICES_INTERVAL_MS = 3_600_000;
const noticesIntervalSchema = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of milliseconds')
  .transform(Number)
  .refine(
    (ms) => ms >= MIN_NOTICES_INTERVAL_MS && ms <= MAX_NOTICES_INTERVAL_MS,
    `must be between ${MIN_NOTICES_INTERVAL_MS} and ${MAX_NOTICES_INTERVAL_MS} ms`,
  );

/** An SMTP conversation or a webhook call that takes longer than this is given up and retried later. */
const noticesSendTimeoutSchema = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of milliseconds')
  .transform(Number)
  .refine((ms) => ms >= 1_000 && ms <= 60_000, 'must be between 1000 and 60000 ms');

/**
 * PUBLIC_BASE_URL: the address clients call the API at, as the notices' links say it (a path prefix is kept, a
 * trailing slash dropped); unset or empty: none, and the links are paths on the API.
 */
const publicBaseUrlSchema = z.string().transform((text, ctx): string | undefined => {
  if (text === '') return undefined;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    ctx.addIssue({ code: 'custom', message: 'must be an http:// or https:// URL such as https://api.example.com' });
  } else if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    ctx.addIssue({ code: 'custom', message: 'must have no query, fragment or credentials' });
  } else return url.href.replace(/\/+$/, '');
  return z.NEVER;
});

/**
 * SMTP_URL, NOTICE_FROM (required with SMTP_URL, and checked when set without it), NOTICES_INTERVAL_MS,
 * NOTICES_SEND_TIMEOUT_MS, PUBLIC_BASE_URL.
 */
function readNoticesConfig(env: NodeJS.ProcessEnv): NoticesConfig {
  const vars = readEnv(env, {
    NOTICES_INTERVAL_MS: { schema: noticesIntervalSchema, default: '60000' },
    NOTICES_SEND_TIMEOUT_MS: { schema: noticesSendTimeoutSchema, default: '10000' },
    PUBLIC_BASE_URL: { schema: publicBaseUrlSchema, default: '' },
  });
  const common = {
    intervalMs: vars.NOTICES_INTERVAL_MS,
    publicBaseUrl: vars.PUBLIC_BASE_URL,
    sendTimeoutMs: vars.NOTICES_SEND_TIMEOUT_MS,
  };
  const from = env.NOTICE_FROM === undefined || env.NOTICE_FROM === '' ? undefined : parseMailbox(env.NOTICE_FROM);
  if (env.SMTP_URL === undefined || env.SMTP_URL === '') return { email: undefined, ...common };
  const smtpUrl = parseSmtpUrl(env.SMTP_URL);
  if (from === undefined)
    throw new ConfigError('NOTICE_FROM: must be set when SMTP_URL is (the address the notices come from)');
  return { email: { smtpUrl, from }, ...common };
}

/** PIN_CHANGES_PER_MINUTE when unset. */
export const DEFAULT_PIN_CHANGES_PER_MINUTE = 10;

/** A body below a kibibyte is no order; above 64 MiB, one translated answer would hold a process's memory hostage. */
const MIN_TRANSLATION_BYTES = 1024;
const MAX_TRANSLATION_BYTES = 64 * 1024 * 1024;
const translationMaxBytesSchema = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of bytes')
  .transform(Number)
  .refine(
    (bytes) => bytes >= MIN_TRANSLATION_BYTES && bytes <= MAX_TRANSLATION_BYTES,
    `must be between ${MIN_TRANSLATION_BYTES} and ${MAX_TRANSLATION_BYTES} bytes`,
  );
/** Deeper than this, JSON.stringify itself could run out of stack on a translated body. */
const MAX_TRANSLATION_DEPTH = 1000;
const translationMaxDepthSchema = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of levels')
  .transform(Number)
  .refine(
    (depth) => depth >= 1 && depth <= MAX_TRANSLATION_DEPTH,
    `must be between 1 and ${MAX_TRANSLATION_DEPTH} levels`,
  );
/** TRANSLATION_MAX_INFLIGHT_BYTES when unset. */
export const DEFAULT_TRANSLATION_MAX_INFLIGHT_BYTES = 64 * 1024 * 1024;
const MAX_TRANSLATION_INFLIGHT_BYTES = 4 * 1024 * 1024 * 1024;
const translationInflightSchema = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of bytes')
  .transform(Number)
  .refine(
    (bytes) => bytes >= MIN_TRANSLATION_BYTES && bytes <= MAX_TRANSLATION_INFLIGHT_BYTES,
    `must be between ${MIN_TRANSLATION_BYTES} and ${MAX_TRANSLATION_INFLIGHT_BYTES} bytes`,
  );

/**
 * CONSUMER_KEYS_URL: an absolute http(s) URL a client follows to get a key (a page, a form, a mail address's page); ''
 * for none.
 */
const consumerKeysUrlSchema = z
  .string()
  .refine(
    (text) => text === '' || (URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol)),
    'must be an http:// or https:// URL such as https://developer.example.com/keys',
  )
  .refine((text) => !/[\s<>"]/.test(text), 'must not contain spaces, <, > or quotes (it is written into a Link header)')
  .transform((text) => (text === '' ? undefined : text));

/**
 * QUERY_KEY_PARAMETERS: comma-separated query parameter names, each what a URL can carry unencoded (letters, digits,
 * `-._~`), compared without regard to case.
 */
const queryKeyParametersSchema = z
  .string()
  .transform((text) => text.split(',').map((name) => name.trim()))
  .refine(
    (names) => names.every((name) => /^[A-Za-z0-9._~-]{1,64}$/.test(name)),
    'must be a comma-separated list of query parameter names such as api_key,token',
  );

/** PIN_CHANGES_PER_MINUTE: at least one (a consumer must be able to move), at most ten a second. */
const pinChangesPerMinuteSchema = z
  .string()
  .regex(/^\d{1,3}$/, 'must be a whole number from 1 to 600')
  .transform(Number)
  .refine((count) => count >= 1 && count <= 600, 'must be a whole number from 1 to 600');
/** GATEWAY_CLOCK_START: a date or an RFC 3339 date-time with offset, as the policy file writes its instants. */
const clockStartSchema = z.union([z.literal('').transform(() => undefined), instant], {
  error: instantRule,
});

/** A moved clock is for rehearsals: a production gateway must answer at the real date. */
function readClockStart(env: NodeJS.ProcessEnv, raw: number | undefined): number | undefined {
  if (raw !== undefined && env.NODE_ENV === 'production')
    throw new ConfigError(
      'GATEWAY_CLOCK_START: moves the clock for a rehearsal and is refused with NODE_ENV=production (unset it; ' +
        'GET /versions?at= previews a date in production)',
    );
  return raw;
}

const onOffSchema = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((text) => text === 'true');

/**
 * The gateway's environment (docs/configuration.md#environment-variables): pure, so tests can pass any environment;
 * throws ConfigError naming the variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  const vars = readEnv(env, {
    GATEWAY_HOST: { schema: hostSchema, default: '0.0.0.0' },
    GATEWAY_PORT: { schema: portSchema, default: '8080' },
    GATEWAY_ADMIN_HOST: { schema: hostSchema, default: '127.0.0.1' },
    GATEWAY_ADMIN_PORT: { schema: portSchema, default: '9464' },
    BACKEND_URL: { schema: backendUrlSchema, default: 'http://127.0.0.1:8081' },
    BACKEND_TIMEOUT_MS: { schema: backendTimeoutSchema, default: '9000' },
    // Relative paths resolve against the working directory (the repository root under npm start).
    API_VERSIONS_FILE: { schema: filePathSchema, default: 'ops/versions.json' },
    API_VERSIONS_WATCH: { schema: onOffSchema, default: 'true' },
    SHUTDOWN_DELAY_MS: { schema: shutdownDelaySchema, default: '0' },
    LOG_LEVEL: { schema: logLevelSchema, default: 'info' },
    // Relative to the working directory, like API_VERSIONS_FILE: the repository root under npm start.
    GATEWAY_DATA_DIR: { schema: z.string().min(1, 'must name a directory'), default: '.data/gateway' },
    TRANSLATION_MAX_BYTES: { schema: translationMaxBytesSchema, default: String(DEFAULT_TRANSLATION_MAX_BYTES) },
    TRANSLATION_MAX_DEPTH: { schema: translationMaxDepthSchema, default: String(DEFAULT_TRANSLATION_MAX_DEPTH) },
    TRANSLATION_MAX_INFLIGHT_BYTES: {
      schema: translationInflightSchema,
      default: String(DEFAULT_TRANSLATION_MAX_INFLIGHT_BYTES),
    },
    CONSUMER_KEYS_URL: { schema: consumerKeysUrlSchema, default: '' },
    QUERY_KEY_PARAMETERS: { schema: queryKeyParametersSchema, default: DEFAULT_QUERY_KEY_PARAMETERS.join(',') },
    PIN_CHANGES_PER_MINUTE: { schema: pinChangesPerMinuteSchema, default: String(DEFAULT_PIN_CHANGES_PER_MINUTE) },
    GATEWAY_CLOCK_START: { schema: clockStartSchema, default: '' },
  });
  // Below one body's limit, no body of that size could ever be translated.
  if (vars.TRANSLATION_MAX_INFLIGHT_BYTES < vars.TRANSLATION_MAX_BYTES) {
    throw new ConfigError(
      `TRANSLATION_MAX_INFLIGHT_BYTES: must be at least TRANSLATION_MAX_BYTES (${vars.TRANSLATION_MAX_BYTES}) ` +
        `(got "${vars.TRANSLATION_MAX_INFLIGHT_BYTES}")`,
    );
  }
  return {
    host: vars.GATEWAY_HOST,
    port: vars.GATEWAY_PORT,
    adminHost: vars.GATEWAY_ADMIN_HOST,
    adminPort: vars.GATEWAY_ADMIN_PORT,
    backendUrl: vars.BACKEND_URL,
    backendTimeoutMs: vars.BACKEND_TIMEOUT_MS,
    policyPath: vars.API_VERSIONS_FILE,
    watchPolicy: vars.API_VERSIONS_WATCH,
    shutdownDelayMs: vars.SHUTDOWN_DELAY_MS,
    logLevel: vars.LOG_LEVEL,
    adminToken: readAdminToken(env),
    database: readDatabaseConfig(env),
    dataDir: vars.GATEWAY_DATA_DIR,
    notices: readNoticesConfig(env),
    translationMaxBytes: vars.TRANSLATION_MAX_BYTES,
    translationMaxDepth: vars.TRANSLATION_MAX_DEPTH,
    translationMaxInflightBytes: vars.TRANSLATION_MAX_INFLIGHT_BYTES,
    consumerKeysUrl: vars.CONSUMER_KEYS_URL,
    tracing: readTracingConfig(env, 'gateway'),
    queryKeyParameters: vars.QUERY_KEY_PARAMETERS,
    pinChangesPerMinute: vars.PIN_CHANGES_PER_MINUTE,
    clockStartMs: readClockStart(env, vars.GATEWAY_CLOCK_START),
  };
}

/** The one place the process environment is read. */
export function loadProcessConfig(): GatewayConfig {
  return loadConfig(process.env);
}

/** What `npm run consumers` needs: where the gateway's admin listener is, and its token if it has one. */
export interface ConsumersCliConfig {
  adminUrl: string;
  adminToken: string | undefined;
}

/** GATEWAY_ADMIN_URL (default http://127.0.0.1:9464) and ADMIN_TOKEN, for the consumer CLI. */
export function loadConsumersCliConfig(env: NodeJS.ProcessEnv): ConsumersCliConfig {
  const vars = readEnv(env, {
    GATEWAY_ADMIN_URL: {
      schema: z
        .string()
        .refine(
          (text) => URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol),
          'must be an http:// URL such as http://127.0.0.1:9464',
        ),
      default: 'http://127.0.0.1:9464',
    },
  });
  return { adminUrl: vars.GATEWAY_ADMIN_URL.replace(/\/+$/, ''), adminToken: readAdminToken(env) };
}
