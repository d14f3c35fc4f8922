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

/** Parses and validates the bytes of a JSON file named by an environment variable; every failure names that variable. */
export function parseJsonFile<Schema extends z.ZodType>(variable: string, path: string, bytes: Buffer, schema: Schema): z.output<Schema> {
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
export function readJsonFile<Schema extends z.ZodType>(variable: string, path: string, schema: Schema): z.output<Schema> {
  return parseJsonFile(variable, path, readFileOf(variable, path), schema);
}
