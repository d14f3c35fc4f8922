import { parseArgs } from 'node:util';
import { OFF_LOOPBACK_ERROR } from '@version-router/platform/admin';
import { ConfigError } from '@version-router/platform/config';
import { loadConsumersCliConfig, type ConsumersCliConfig } from '../config.js';
import { REGISTERED_CONSUMERS_PATH } from './registry-routes.js';

const USAGE = `usage: npm run consumers -- <command>
  list                                                              every registered consumer
  create <name> [--id <id>] [--email <address>] [--webhook <url>] [--version <n>]
                                                                    register (pinned to <n>, else the newest current)
  show <id>                                                         the consumer and its keys
  add-key <id>                                                      issue a key (printed once)
  revoke-key <id> <key_id>                                          revoke a key
  version <id> <n>                                                  pin the consumer to version <n>
The gateway's admin listener: GATEWAY_ADMIN_URL (default http://127.0.0.1:9464), with ADMIN_TOKEN when it has one.`;

class UsageError extends Error {}

interface AdminCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
}

/** A version number as the command line gives it: digits only, sent as the integer the gateway checks. */
function versionOf(text: string, usage: string): number {
  if (!/^[0-9]{1,9}$/.test(text)) throw new UsageError(usage);
  return Number(text);
}

/** The admin call a command line asks for. */
function callOf(args: string[]): AdminCall {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      id: { type: 'string' },
      email: { type: 'string' },
      webhook: { type: 'string' },
      version: { type: 'string' },
    },
  });
  const [command, ...rest] = positionals;
  const one = (what: string): string => {
    if (rest.length !== 1) throw new UsageError(`${command} takes ${what}`);
    return encodeURIComponent(rest[0] as string);
  };
  if (command !== 'create' && Object.keys(values).length > 0)
    throw new UsageError(`${command ?? 'no command'} takes no options`);
  switch (command) {
    case 'create': {
      if (rest.length !== 1) throw new UsageError('create takes one name (quote a name with spaces)');
      const body = {
        name: rest[0],
        ...(values.id === undefined ? {} : { id: values.id }),
        ...(values.email === undefined ? {} : { contact_email: values.email }),
        ...(values.webhook === undefined ? {} : { webhook_url: values.webhook }),
        ...(values.version === undefined
          ? {}
          : {
              version: versionOf(values.version, `--version takes a version number, like 1 (got "${values.version}")`),
            }),
      };
      return { method: 'POST', path: '/consumers', body };
    }
    case 'list':
      if (rest.length !== 0) throw new UsageError('list takes nothing');
      return { method: 'GET', path: REGISTERED_CONSUMERS_PATH };
    case 'show':
      return { method: 'GET', path: `/consumers/${one('one consumer id')}` };
    case 'add-key':
      return { method: 'POST', path: `/consumers/${one('one consumer id')}/keys` };
    case 'revoke-key': {
      if (rest.length !== 2) throw new UsageError('revoke-key takes a consumer id and a key id');
      return {
        method: 'DELETE',
        path: `/consumers/${encodeURIComponent(rest[0] as string)}/keys/${encodeURIComponent(rest[1] as string)}`,
      };
    }
    case 'version': {
      const usage = 'version takes a consumer id and a version number';
      if (rest.length !== 2) throw new UsageError(usage);
      const body = { version: versionOf(rest[1] as string, usage) };
      return { method: 'PUT', path: `/consumers/${encodeURIComponent(rest[0] as string)}/version`, body };
    }
    default:
      throw new UsageError(command === undefined ? 'no command' : `unknown command "${command}"`);
  }
}

/**
 * What to change when the admin listener refuses the caller itself (docs/consumers.md#admin-authentication): every
 * 401 there is the token's; a 403 is only when it names the loopback rule (a pin's 403 is the version's).
 */
function fixFor(status: number, error: string | undefined, withToken: boolean): string {
  if (status === 401)
    return withToken ? " (ADMIN_TOKEN is not the gateway's token)" : ' (the gateway asks for a token: set ADMIN_TOKEN)';
  if (status === 403 && error === OFF_LOOPBACK_ERROR)
    return " (the admin listener is not on loopback: set ADMIN_TOKEN to the gateway's token)";
  return '';
}

/**
 * Sends the call and answers what to print: the JSON answer, or a line for a 204. Throws with the ErrorResponse's text.
 */
async function send({ adminUrl, adminToken }: ConsumersCliConfig, { method, path, body }: AdminCall): Promise<string> {
  const headers: Record<string, string> = adminToken === undefined ? {} : { authorization: `Bearer ${adminToken}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${adminUrl}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) {
    let reason = text;
    let errorText: string | undefined;
    try {
      const error = JSON.parse(text) as { error?: string; details?: string };
      reason = error.details === undefined ? String(error.error) : `${error.error}: ${error.details}`;
      errorText = error.error;
    } catch {
      // Not our ErrorResponse: shown as it came.
    }
    throw new Error(`${res.status} ${reason}${fixFor(res.status, errorText, adminToken !== undefined)}`);
  }
  return res.status === 204
    ? `revoked ${decodeURIComponent(path.split('/').at(-1) ?? '')}`
    : JSON.stringify(JSON.parse(text), null, 2);
}

/**
 * `npm run consumers -- …`: the consumer registry's admin calls from a terminal. Exit 0 on success, 1 when the
 * gateway refused or could not be reached (its reason on stderr), 2 for a command line it cannot read.
 */
async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.length === 1 && ['help', '--help', '-h'].includes(args[0] as string)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let call: AdminCall;
  let config: ConsumersCliConfig;
  try {
    config = loadConsumersCliConfig(process.env);
    call = callOf(args);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`invalid configuration: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  try {
    process.stdout.write(`${await send(config, call)}\n`);
    return 0;
  } catch (err) {
    // fetch names why it could not connect in its cause: a code (ECONNREFUSED), or a message alone ("bad port").
    const failure = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    const cause = failure === undefined ? undefined : (failure.code ?? failure.message);
    const unreachable =
      cause === undefined
        ? ''
        : ` (${cause} at ${config.adminUrl}: is the gateway running? Its banner prints the admin URL; set ` +
          `GATEWAY_ADMIN_URL to it)`;
    process.stderr.write(`${(err as Error).message}${unreachable}\n`);
    return 1;
  }
}

process.exitCode = await main();
