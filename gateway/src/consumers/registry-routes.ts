import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Clock } from '@version-router/platform/clock';
import { HttpError, sendError } from '@version-router/platform/errors';
import type { PolicyInForce } from '../versions/in-force.js';
import type { KeyCache } from './key-cache.js';
import { generateKey } from './keys.js';
import type { Ledger } from './ledger.js';
import { newestCurrent, pinRefusal } from './pins.js';
import type { ConsumerStore } from './store.js';
import { storeUnavailableHandler } from '../database/unavailable.js';

export interface RegistryRoutesOptions {
  store: ConsumerStore;
  keys: KeyCache;
  clock: Clock;
  /** The versions a new consumer may be pinned to, and the newest current one it is pinned to by default. */
  policies: PolicyInForce;
  /** First uses, for closed_to_new (a new consumer has none). */
  ledger: Ledger;
}

/** Every registered consumer (id, name, contacts, created_at), by id: what `npm run consumers -- list` prints. */
export const REGISTERED_CONSUMERS_PATH = '/registered-consumers';

/** An id: lower-case letters, digits and inner hyphens, 64 at most (it travels in the API-Consumer header). */
const ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const ID_RULE = 'must be 1-64 lower-case letters, digits and hyphens, starting and ending with a letter or digit';

const httpUrl = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine(
    (text) => URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol),
    'must be an http:// or https:// URL',
  );

const newConsumerBody = z.strictObject({
  name: z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .trim()
    .min(1, 'must not be empty')
    .max(200, 'must be at most 200 characters'),
  contact_email: z
    .email({ error: 'must be an e-mail address' })
    .max(254, 'must be at most 254 characters')
    .nullable()
    .optional(),
  webhook_url: httpUrl.nullable().optional(),
  id: z.string({ error: 'must be a string' }).regex(ID_PATTERN, ID_RULE).optional(),
  version: z.number({ error: 'must be a number' }).int({ error: 'must be an integer' }).optional(),
});

/** The id a name gives: ASCII letters and digits, lower case, every other run of characters one hyphen. */
function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 64)
    .replace(/^-+|-+$/g, '');
}

function invalid(details: string): HttpError {
  return new HttpError(400, 'invalid consumer', details);
}

/** The first problem of a body, as one `details` line: `unknown field "x"` or `<field>: <rule>`. */
function problemOf(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid body';
  if (issue.code === 'unrecognized_keys') return `unknown field "${issue.keys[0]}"`;
  if (issue.path.length === 0) return 'must be a JSON object';
  return `${issue.path.join('.')}: ${issue.message}`;
}

/** `whsec_` + base64 of 32 random bytes: the Standard Webhooks form of a signing secret. */
const webhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The consumer registry on the admin port: register a consumer, read it (with its keys, never their secrets),
 * issue a key (shown once) and revoke one. Each route hands out or changes credentials, so without
 * ADMIN_TOKEN it answers on a loopback admin listener only. Keys this replica issues or revokes apply here
 * at once, and on the other replicas at their next poll.
 */
export async function registryRoutes(
  admin: FastifyInstance,
  { store, keys, clock, policies, ledger }: RegistryRoutesOptions,
): Promise<void> {
  const credentials = { config: { handsOutCredentials: true } };
  // The body is JSON whatever its Content-Type says (curl -d sends a form type), as on the API port.
  admin.removeAllContentTypeParsers();
  admin.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, body === '' ? undefined : JSON.parse(body as string));
    } catch {
      done(invalid('the body is not JSON'));
    }
  });
  admin.setErrorHandler(storeUnavailableHandler);

  admin.post('/consumers', credentials, async (request, reply) => {
    const parsed = newConsumerBody.safeParse(request.body ?? {});
    if (!parsed.success) throw invalid(problemOf(parsed.error));
    const { name, contact_email = null, webhook_url = null } = parsed.data;
    const id = parsed.data.id ?? slugOf(name);
    if (id === '') throw invalid('name: gives no id (no letter or digit); send "id"');
    const nowMs = clock();
    const { policy } = policies.current;
    const pinned_version = parsed.data.version ?? newestCurrent(policy, nowMs);
    const refusal = pinRefusal(policy, ledger, id, pinned_version, nowMs);
    if (refusal !== undefined) throw refusal;
    const secret = webhook_url === null ? null : webhookSecret();
    const created = await store.createConsumer(
      { id, name, contact_email, webhook_url, webhook_secret: secret, pinned_version },
      nowMs,
    );
    if (created === undefined) return sendError(reply, 409, 'consumer already exists', `id "${id}" is taken`);
    void reply.code(201).header('location', `/consumers/${id}`);
    // The secret is answered this once (never cached, as a new key is); the notices sign with the stored copy.
    if (secret !== null) void reply.header('cache-control', 'no-store');
    return { ...created, keys: [], ...(secret === null ? {} : { webhook_secret: secret }) };
  });

  // `GET /consumers` is the anonymous top-consumers table (status/routes.ts); the registry's list has its own path.
  admin.get(REGISTERED_CONSUMERS_PATH, credentials, async () => ({ consumers: await store.consumers() }));

  admin.get<{ Params: { id: string } }>('/consumers/:id', credentials, async (request, reply) => {
    const [consumer, refused] = await Promise.all([
      store.consumer(request.params.id),
      store.refusalsOf(request.params.id),
    ]);
    if (consumer === undefined) return sendError(reply, 404, 'consumer not found');
    // The versions closed to new consumers it was turned away from: who was refused, not only logged.
    return { ...consumer, refused };
  });

  admin.post<{ Params: { id: string } }>('/consumers/:id/keys', credentials, async (request, reply) => {
    const consumerId = request.params.id;
    const { keyId, key, digest } = generateKey();
    const record = await store.addKey(consumerId, { keyId, digest }, clock());
    if (record === undefined) return sendError(reply, 404, 'consumer not found');
    keys.remember({ keyId, consumerId, digest, revoked: false, pin: record.pin });
    void reply.code(201).header('cache-control', 'no-store');
    return { key_id: keyId, key, consumer_id: consumerId, created_at: record.created_at };
  });

  admin.delete<{ Params: { id: string; keyId: string } }>(
    '/consumers/:id/keys/:keyId',
    credentials,
    async (request, reply) => {
      const { id, keyId } = request.params;
      if (!(await store.revokeKey(id, keyId, clock()))) {
        const known = (await store.consumer(id)) !== undefined;
        return sendError(reply, 404, known ? 'key not found' : 'consumer not found');
      }
      keys.revoke(keyId);
      return reply.code(204).send();
    },
  );
}
