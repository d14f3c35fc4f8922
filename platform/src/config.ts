import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** A start-up configuration problem; main.ts prints its one-line message and exits 1. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const portSchema = z
  .string()
  .regex(/^\d{1,5}$/, 'must be a port number (0-65535)')
  .transform(Number)
  .refine((port) => port <= 65_535, 'must be a port number (0-65535)');

export const hostSchema = z.string().min(1, 'must not be empty');

export const filePathSchema = z.string().min(1, 'must name a file');

/**
 * SHUTDOWN_DELAY_MS: how long a stopping process keeps serving, already reported not ready, before it
 * closes its listener; long enough for a load balancer's readiness checks to take it out.
 */
export const shutdownDelaySchema = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of milliseconds')
  .transform(Number)
  .refine((ms) => ms <= 30_000, 'must be at most 30000 ms');

/** Where a process keeps its data in PostgreSQL (docs/deployment.md#users-in-postgresql). */
export interface DatabaseConfig {
  /** DATABASE_URL as given: it may hold a password, so it is never printed. */
  url: string;
  /** DATABASE_POOL_MAX: connections this replica opens at most. */
  poolMax: number;
  /**
   * DATABASE_MIGRATION_TIMEOUT_MS: how long start-up waits for another replica's schema migration (with
   * `migrations: 'check'`, for the build's migrations to be applied by its migration command), and how long each
   * migration statement may run (not the requests' 3 s: a migration may take minutes).
   */
  migrationTimeoutMs: number;
  /**
   * DATABASE_MIGRATIONS: `apply` (unset: the default) brings the schema up to this build's at start; `check` never
   * changes it (the process may run as a role without DDL rights, its migration command as one with them) and
   * starts once the schema holds this build's migrations and is at most one release newer.
   */
  migrations?: DatabaseMigrations;
}

export type DatabaseMigrations = 'apply' | 'check';

const migrationsSchema = z.enum(['apply', 'check'], { error: 'must be apply or check' });

const migrationTimeoutSchema = z
  .string()
  .regex(/^[0-9]{1,8}$/, 'must be a whole number of milliseconds from 1000 to 86400000')
  .transform(Number)
  .refine((ms) => ms >= 1_000 && ms <= 86_400_000, 'must be a whole number of milliseconds from 1000 to 86400000');

const poolMaxSchema = z
  .string()
  .regex(/^[0-9]{1,3}$/, 'must be an integer from 1 to 100')
  .transform(Number)
  .refine((max) => max >= 1 && max <= 100, 'must be an integer from 1 to 100');

/**
 * A postgres:// or postgresql:// URL with a host (or a socket directory). The value is never echoed back: where it
 * parses, the
 * message shows it with the password masked; where it does not, it is not shown at all.
 */
function parseDatabaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(
      'DATABASE_URL: must be a URL like postgres://user:password@host:5432/database (value not shown: it may hold a ' +
        'password)',
    );
  }
  if (url.password !== '') url.password = '***';
  const shown = JSON.stringify(url.href);
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new ConfigError(`DATABASE_URL: must start with postgres:// or postgresql:// (got ${shown})`);
  // postgres:///db?host=/run/postgresql names a Unix socket directory instead of a host.
  if (url.hostname === '' && !url.searchParams.has('host'))
    throw new ConfigError(`DATABASE_URL: must name a host (got ${shown})`);
  return raw;
}

/**
 * DATABASE_URL, DATABASE_POOL_MAX (default 10), DATABASE_MIGRATION_TIMEOUT_MS and DATABASE_MIGRATIONS: undefined when
 * DATABASE_URL is unset or empty. The others are checked either way, so a typo is caught before the day the URL is set.
 */
export function readDatabaseConfig(env: NodeJS.ProcessEnv): DatabaseConfig | undefined {
  const {
    DATABASE_POOL_MAX: poolMax,
    DATABASE_MIGRATION_TIMEOUT_MS: migrationTimeoutMs,
    DATABASE_MIGRATIONS: migrations,
  } = readEnv(env, {
    DATABASE_POOL_MAX: { schema: poolMaxSchema, default: '10' },
    DATABASE_MIGRATION_TIMEOUT_MS: { schema: migrationTimeoutSchema, default: '600000' },
    DATABASE_MIGRATIONS: { schema: migrationsSchema, default: 'apply' },
  });
  const url = env.DATABASE_URL;
  return url === undefined || url === ''
    ? undefined
    : { url: parseDatabaseUrl(url), poolMax, migrationTimeoutMs, migrations };
}

/** The shortest ADMIN_TOKEN accepted: a short token can be guessed by trying. */
const MIN_ADMIN_TOKEN_LENGTH = 16;

/**
 * ADMIN_TOKEN (both processes): undefined when unset or empty. Too short stops the process with one line that
 * names the variable and its length, never its value.
 */
export function readAdminToken(env: NodeJS.ProcessEnv): string | undefined {
  const token = env.ADMIN_TOKEN;
  if (token === undefined || token === '') return undefined;
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(
      `ADMIN_TOKEN: must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (got ${token.length}; value not shown)`,
    );
  }
  // What an Authorization: Bearer header can carry.
  if (!/^[\x21-\x7e]+$/.test(token))
    throw new ConfigError('ADMIN_TOKEN: must be printable ASCII without spaces (value not shown)');
  return token;
}

export const logLevelSchema = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * Reads each variable through its schema (default applied when unset) and throws a ConfigError
 * naming the first variable that is invalid.
 */
export function readEnv<Shape extends Record<string, z.ZodType>>(
  env: NodeJS.ProcessEnv,
  variables: { [Name in keyof Shape]: { schema: Shape[Name]; default: string } },
): { [Name in keyof Shape]: z.output<Shape[Name]> } {
  const result: Partial<Record<keyof Shape, unknown>> = {};
  for (const name of Object.keys(variables) as (keyof Shape & string)[]) {
    const { schema, default: fallback } = variables[name];
    const raw = env[name] ?? fallback;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const reason = parsed.error.issues[0]?.message ?? 'is invalid';
      throw new ConfigError(`${name}: ${reason} (got ${JSON.stringify(raw)})`);
    }
    result[name] = parsed.data;
  }
  return result as { [Name in keyof Shape]: z.output<Shape[Name]> };
}

/** Reads a file named by an environment variable, as bytes; a failure names that variable. */
export function readFileOf(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${variable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/**
 * Parses and validates the bytes of a JSON file named by an environment variable; every failure names that variable.
 */
export function parseJsonFile<Schema extends z.ZodType>(
  variable: string,
  path: string,
  bytes: Buffer,
  schema: Schema,
): z.output<Schema> {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new ConfigError(`${variable}: ${path} is not valid JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.join('.')}`;
    throw new ConfigError(`${variable}: ${path} is invalid${where}: ${issue?.message ?? 'unknown problem'}`);
  }
  return parsed.data;
}

/** Reads and validates a JSON file named by an environment variable; every failure names that variable. */
export function readJsonFile<Schema extends z.ZodType>(
  variable: string,
  path: string,
  schema: Schema,
): z.output<Schema> {
  return parseJsonFile(variable, path, readFileOf(variable, path), schema);
}
