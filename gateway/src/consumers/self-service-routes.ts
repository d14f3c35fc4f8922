import rateLimit from '@fastify/rate-limit';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { z } from 'zod';
import type { Clock } from '@version-router/platform/clock';
import { HttpError, sendError } from '@version-router/platform/errors';
import { TOO_MANY_PIN_CHANGES_ERROR } from '@version-router/platform/pin-document';
import { storeUnavailableHandler } from '../database/unavailable.js';
import type { PolicyInForce } from '../versions/in-force.js';
import { checkApiKey, refuseKey } from './authenticate.js';
import type { KeyCache } from './key-cache.js';
import type { Ledger } from './ledger.js';
import { ROLLBACK_WINDOW_MS, pinRefusal, pinView, type PinView } from './pins.js';
import { answerPreview } from './preview/answer.js';
import type { ConsumerRecord, ConsumerStore, PinRecord } from './store.js';
import type { MigrationGuides } from '../changes/guides.js';

export interface PinRoutesOptions {
  policies: PolicyInForce;
  store: ConsumerStore;
  keys: KeyCache;
  ledger: Ledger;
  clock: Clock;
  /** The migration guides an upgrade preview is judged by. */
  guides: MigrationGuides;
}

export interface AdminPinRoutesOptions extends PinRoutesOptions {
  /**
   * Tells the consumer of a pin the platform team moved (the notices: e-mail and webhook, once across the fleet);
   * absent, this gateway sends no notices.
   */
  notifyPinMoved?: (consumer: ConsumerRecord, moved: PinRecord) => Promise<void>;
}

export interface SelfServiceRoutesOptions extends PinRoutesOptions {
  /** PIN_CHANGES_PER_MINUTE: a consumer's own pin changes this replica takes in a minute; more are 429. */
  pinChangesPerMinute: number;
}

/**
 * Consumers whose pin changes one replica counts at once: past this many, the one least recently counted is
 * forgotten (its count starts again). A few hundred bytes each: a bound on memory whatever the number of keys.
 */
const PIN_CHANGE_COUNTS_KEPT = 10_000;
const MINUTE_MS = 60_000;

/**
 * A limit on one consumer's pin changes (`PUT /consumer/version` and the rollback together), counted per consumer
 * (not per key or address) in a fixed window of a minute, on this replica: past it, 429 `too many requests` with
 * Retry-After (the seconds until the window ends) before the body is read or the store asked. A request without a
 * valid key is not counted: it is refused 401 from memory and never reaches the store. The counts are
 * @fastify/rate-limit's, in a bounded LRU map.
 */
async function pinChangeLimit(
  app: FastifyInstance,
  { keys, pinChangesPerMinute }: SelfServiceRoutesOptions,
): Promise<preHandlerAsyncHookHandler> {
  const only = { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false };
  await app.register(rateLimit, {
    global: false,
    cache: PIN_CHANGE_COUNTS_KEPT,
    addHeaders: { ...only, 'retry-after': true },
    addHeadersOnExceeding: only,
  });
  const noConsumer = '';
  return app.rateLimit({
    max: pinChangesPerMinute,
    timeWindow: MINUTE_MS,
    cache: PIN_CHANGE_COUNTS_KEPT,
    keyGenerator: (request) => {
      const check = checkApiKey(request, keys);
      return typeof check === 'object' ? check.consumerId : noConsumer;
    },
    allowList: (_request, consumer) => consumer === noConsumer,
    errorResponseBuilder: (_request, { ttl }) =>
      new HttpError(
        429,
        TOO_MANY_PIN_CHANGES_ERROR,
        `at most ${pinChangesPerMinute} pin changes a minute per consumer; try again in ${Math.ceil(ttl / 1_000)} s`,
      ),
  });
}

const versionBody = z.strictObject({
  version: z.number({ error: 'must be a number' }).int({ error: 'must be an integer' }).optional(),
});

const invalidJson = (details: string): HttpError => new HttpError(400, 'invalid JSON', details);

/**
 * The version a `{"version": n}` body asks for. As for users (SPEC): a body that cannot be decoded (not JSON,
 * not an object, an unknown field, a version that is no integer) is 400 `invalid JSON`; one without a version
 * is 422 `validation failed`.
 */
function requestedVersion(text: unknown): number {
  let body: unknown;
  try {
    body = JSON.parse(typeof text === 'string' ? text : '');
  } catch {
    throw invalidJson('the body is not JSON');
  }
  const parsed = versionBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys') throw invalidJson(`unknown field "${issue.keys[0]}"`);
    const atRoot = issue === undefined || issue.path.length === 0;
    throw invalidJson(atRoot ? 'must be a JSON object' : `${issue.path.join('.')}: ${issue.message}`);
  }
  if (parsed.data.version === undefined) throw new HttpError(422, 'validation failed', 'version is required');
  return parsed.data.version;
}

/**
 * These routes decode their own bodies: every body is read as text whatever its Content-Type (curl -d sends a
 * form type; a malformed type would be 415 before any parser), and a body over the server's limit is 400
 * `invalid JSON` as on the users' routes; the store being away is 503 `storage unavailable`.
 */
function decodeOwnBodies(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.headers['content-type'] !== undefined) {
      request.headers = { ...request.headers, 'content-type': 'text/plain' };
    }
    done();
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(reply, 400, 'invalid JSON', 'the body is larger than 1 MiB');
    }
    return storeUnavailableHandler(err, request, reply);
  });
}

/** Moves a consumer's pin once the rules allow it, and serves the new pin on this replica at once. */
async function movePin(
  { policies, store, keys, ledger, clock }: PinRoutesOptions,
  consumerId: string,
  version: number,
): Promise<PinView | undefined> {
  const nowMs = clock();
  const refusal = pinRefusal(policies.current.policy, ledger, consumerId, version, nowMs);
  if (refusal !== undefined) throw refusal;
  const moved = await store.movePin(consumerId, version, nowMs);
  if (moved !== undefined) keys.repin(consumerId, moved.pinned_version);
  return moved === undefined ? undefined : pinView(moved);
}

/**
 * The consumer's own pin on the API port, with its own key (docs/consumers.md#pins): `GET /consumer`, `PUT
 * /consumer/version` and `POST /consumer/version/rollback` (back to the version the last move left, within 72
 * h of it), and `GET /consumer/upgrade-preview?to=N`, what moving to N would change for its calls
 * (docs/consumers.md#upgrade-preview). 401 without a valid key, as a versioned request is refused; 429 past
 * PIN_CHANGES_PER_MINUTE changes of one consumer. Answers are one consumer's: never stored by a cache.
 */
export async function selfServiceRoutes(app: FastifyInstance, options: SelfServiceRoutesOptions): Promise<void> {
  const { policies, store, keys, ledger, clock } = options;
  decodeOwnBodies(app);
  const limited = { onRequest: await pinChangeLimit(app, options) };
  app.addHook('onSend', async (_request, reply) => {
    void reply.header('cache-control', 'no-store').header('vary', 'API-Key');
  });

  /** The consumer the request's key names; undefined once the reply is a 401. */
  const consumerOf = (request: FastifyRequest, reply: FastifyReply): string | undefined => {
    const check = checkApiKey(request, keys);
    if (check === 'none' || check === 'invalid') {
      void refuseKey(reply, check);
      return undefined;
    }
    return check.consumerId;
  };

  app.get('/consumer', async (request, reply) => {
    const consumerId = consumerOf(request, reply);
    if (consumerId === undefined) return reply;
    const record = await store.pinOf(consumerId);
    return record === undefined ? refuseKey(reply, 'invalid') : pinView(record);
  });

  app.get('/consumer/upgrade-preview', async (request, reply) => {
    const consumerId = consumerOf(request, reply);
    if (consumerId === undefined) return reply;
    const sources = { policies, reader: store, guides: options.guides, clock };
    return answerPreview(request, reply, consumerId, sources, () => refuseKey(reply, 'invalid'));
  });

  app.put('/consumer/version', limited, async (request, reply) => {
    const consumerId = consumerOf(request, reply);
    if (consumerId === undefined) return reply;
    const moved = await movePin(options, consumerId, requestedVersion(request.body));
    return moved ?? refuseKey(reply, 'invalid');
  });

  app.post('/consumer/version/rollback', limited, async (request, reply) => {
    const consumerId = consumerOf(request, reply);
    if (consumerId === undefined) return reply;
    const record = await store.pinOf(consumerId);
    if (record === undefined) return refuseKey(reply, 'invalid');
    const { previous_version: previous, pinned_at: pinnedAt } = record;
    if (previous === null || pinnedAt === null) {
      const details = 'the pin has not moved since registration or the last rollback';
      return sendError(reply, 409, 'nothing to roll back', details);
    }
    const nowMs = clock();
    const closesMs = Date.parse(pinnedAt) + ROLLBACK_WINDOW_MS;
    if (nowMs > closesMs) {
      const until = new Date(closesMs).toISOString();
      const details = `the pin moved at ${pinnedAt}; it could be rolled back until ${until}`;
      return sendError(reply, 409, 'rollback window closed', details);
    }
    const refusal = pinRefusal(policies.current.policy, ledger, consumerId, previous, nowMs);
    if (refusal !== undefined) throw refusal;
    const from = { pinned_version: record.pinned_version, previous_version: previous };
    const rolled = await store.rollBackPin(consumerId, from, nowMs - ROLLBACK_WINDOW_MS, nowMs);
    if (rolled === undefined) return sendError(reply, 409, 'pin changed meanwhile', 'read GET /consumer and try again');
    keys.repin(consumerId, rolled.pinned_version);
    return pinView(rolled);
  });
}

/**
 * `PUT /consumers/{id}/version` on the admin port: the platform team moves a consumer's pin (and `GET
 * /consumers/{id}/upgrade-preview?to=N` shows first what the move would change for its calls), under the same rules
 * as the consumer's own move, and the consumer is told (e-mail and webhook, with its rollback window), since its
 * answers change at once. It is kept like the consumer registry (behind ADMIN_TOKEN, else loopback only), so no
 * key holder reaches it, and it is not rate-limited: an operator moving many consumers at once is its use.
 */
export async function adminPinRoutes(admin: FastifyInstance, options: AdminPinRoutesOptions): Promise<void> {
  decodeOwnBodies(admin);
  const credentials = { config: { handsOutCredentials: true } };
  admin.put<{ Params: { id: string } }>('/consumers/:id/version', credentials, async (request, reply) => {
    void reply.header('cache-control', 'no-store');
    const { id } = request.params;
    const version = requestedVersion(request.body);
    const before = await options.store.pinOf(id);
    const moved = before === undefined ? undefined : await movePin(options, id, version);
    if (moved === undefined) return sendError(reply, 404, 'consumer not found');
    if (moved.pinned_at !== before?.pinned_at && options.notifyPinMoved !== undefined) {
      const consumer = await options.store.consumer(id);
      // The move stands whatever becomes of its notice; a notice that cannot be recorded is logged.
      if (consumer !== undefined)
        await options
          .notifyPinMoved(consumer, moved)
          .catch((err: unknown) =>
            request.log.error(
              { consumer: id, reason: err instanceof Error ? err.message : String(err) },
              'the notice of a pin moved by the platform team could not be recorded; tell the consumer yourself',
            ),
          );
    }
    return moved;
  });

  // What moving the consumer would change for its calls, before the platform team moves it.
  admin.get<{ Params: { id: string } }>('/consumers/:id/upgrade-preview', credentials, async (request, reply) => {
    const { policies, store, guides, clock } = options;
    return answerPreview(request, reply, request.params.id, { policies, reader: store, guides, clock }, () =>
      sendError(reply, 404, 'consumer not found'),
    );
  });
}
