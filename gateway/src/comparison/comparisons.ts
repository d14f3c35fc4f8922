import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { Transform } from 'node:stream';
import type { Logger } from 'pino';
import { Pool } from 'undici';
import type { Clock } from '@version-router/platform/clock';
import type { UpstreamResponse } from '../proxy/backend.js';
import { isJsonType } from '../proxy/translated/context.js';
import { hasBody } from '../proxy/translated/forwarding.js';
import type { RouteTranslation } from '../translation/compile.js';
import type { VersionPolicy } from '../versions/policy.js';
import { ComparisonRefusal, declaredTranslation, readBody, type DeclaredTranslation } from './declarations.js';
import { BODY_PATH, STATUS_PATH, differences, type Difference } from './differences.js';
import {
  createComparisonRecords,
  type ComparisonOutcome,
  type ComparisonReason,
  type ComparisonRecords,
  type ComparisonResult,
} from './records.js';
import type { CompareSettings } from '../versions/compare.js';

/**
 * Comparing a version's declarations with the code they replace, on real traffic
 * (docs/declared-versions.md#comparing-a-declaration-with-the-code-it-replaces). A version with `compare` is served by the
 * backend's own route; for the sampled share of its GET and HEAD requests the gateway keeps a copy of that answer as
 * it passes, and once the answer is sent, asks the successor the same request on a pool of its own, translates its
 * answer back by the declarations and compares the two. The client never waits for it: nothing is asked before its
 * answer is out, a version has at most `max_in_flight` comparisons under way (a sampled request past that is skipped
 * and counted), the successor is given `timeout_ms`, and whatever becomes of the comparison is only counted.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The comparison this request was sampled for, while its answer passes; null for nearly all requests. */
    comparison: Watch | null;
  }
}

/** A compared version of the policy in force: what it is compared by. */
interface Setup {
  readonly settings: CompareSettings;
  readonly translation: DeclaredTranslation;
  readonly ignore: ReadonlySet<string>;
}

/** The backend's own answer as it passes to the client: its status, type and bytes, up to the limit. */
interface OwnAnswer {
  status: number;
  type: string | undefined;
  chunks: Buffer[];
  bytes: number;
  state: 'reading' | 'whole' | 'too_large' | 'failed';
}

/** One sampled request: what the successor is asked, and the own answer once it has passed. */
interface Watch {
  readonly setup: Setup;
  readonly version: number;
  readonly template: string;
  readonly method: 'GET' | 'HEAD';
  /** The successor's path and query, as a translated route would forward the request. */
  readonly target: string;
  readonly headers: Record<string, string>;
  /** `GET /v1/orders/ord-1001`: the example a difference names. */
  readonly request: string;
  readonly requestId: string;
  own: OwnAnswer | undefined;
}

export interface ComparisonOptions {
  backendUrl: string;
  clock: Clock;
  logger: Logger;
  /** TRANSLATION_MAX_BYTES and TRANSLATION_MAX_DEPTH: answers are read, and translated, as a translated route would. */
  maxBytes: number;
  maxDepth: number;
  /** Counts each outcome in `api_version_comparisons_total`. */
  count: (version: number, resource: string, result: ComparisonResult) => void;
  /** Which requests are sampled: a draw in [0, 1) below `sample` is; injected so tests choose. */
  random?: () => number;
}

export interface Comparisons {
  /**
   * The reply-from options of a request served by its own version's route (a versioned resource, not a document):
   * the same options, or for a sampled request of a compared version options that keep a copy of the answer as it
   * passes. `successorTarget` names where a translated route (`route`) would forward the request.
   */
  watch(
    request: FastifyRequest,
    policy: VersionPolicy,
    version: number,
    template: string,
    options: FastifyReplyFromHooks,
    successorTarget: (route: RouteTranslation) => string,
  ): FastifyReplyFromHooks;
  readonly records: ComparisonRecords;
  /** The figures of `version` under the policy's declarations; undefined when it has no `compare`. */
  figures(policy: VersionPolicy, version: number): ReturnType<ComparisonRecords['of']> | undefined;
  /** Gives the catch-all route's requests their `comparison` and starts each sampled one's after its answer. */
  register(app: FastifyInstance): void;
  /** Stops comparing: those under way are abandoned, uncounted. */
  close(): Promise<void>;
}

/** Connections the comparisons hold to the backend at most, whatever the versions' bounds add up to. */
const POOL_CONNECTIONS = 32;

const setupsByPolicy = new WeakMap<VersionPolicy, ReadonlyMap<number, Setup>>();

/** The compared versions of a policy and what each is compared by, built once per policy. */
function setupsOf(policy: VersionPolicy): ReadonlyMap<number, Setup> {
  let setups = setupsByPolicy.get(policy);
  if (setups === undefined) {
    const built = new Map<number, Setup>();
    for (const entry of policy.versions) {
      if (entry.compare === undefined) continue;
      const translation = declaredTranslation(policy.declared, entry.version);
      if (translation !== undefined)
        built.set(entry.version, { settings: entry.compare, translation, ignore: new Set(entry.compare.ignore) });
    }
    setupsByPolicy.set(policy, (setups = built));
  }
  return setups;
}

/** The request headers that shape an answer, as the client sent them, and those the gateway sends every upstream. */
function successorHeaders(request: FastifyRequest, version: number): Record<string, string> {
  const raw = request.raw.headers;
  const headers: Record<string, string> = {
    'x-request-id': request.id,
    // As a translated route tells the backend which version was asked for, and asks for bytes it can parse.
    'api-version-requested': String(version),
    'accept-encoding': 'identity',
  };
  if (raw.accept !== undefined) headers.accept = raw.accept;
  if (raw['accept-language'] !== undefined) headers['accept-language'] = raw['accept-language'];
  if (request.consumer !== null) headers['api-consumer'] = request.consumer;
  return headers;
}

/** undici's codes for a successor that did not answer in time. */
const TIMEOUT_CODES: ReadonlySet<unknown> = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

class Failed extends Error {
  constructor(readonly reason: ComparisonReason) {
    super(reason);
  }
}

/** A status whose answer has no body to compare. */
const bodiless = (status: number): boolean => status === 204 || status === 304 || (status >= 100 && status < 200);

interface SuccessorAnswer {
  status: number;
  type: string | undefined;
  body: Buffer;
}

export function createComparisons({
  backendUrl,
  clock,
  logger,
  maxBytes,
  maxDepth,
  count,
  random = Math.random,
}: ComparisonOptions): Comparisons {
  const pool = new Pool(backendUrl, { connections: POOL_CONNECTIONS, connect: { timeout: 2_000 } });
  const records = createComparisonRecords(count);
  /** Comparisons under way per version, across reloads. */
  const inFlight = new Map<number, number>();
  let closed = false;

  const release = (version: number): void => {
    inFlight.set(version, (inFlight.get(version) ?? 1) - 1);
  };

  const outcome = (
    watch: Watch,
    result: ComparisonResult,
    detail: { differences?: readonly Difference[]; reason?: ComparisonReason } = {},
  ): ComparisonOutcome => ({
    version: watch.version,
    digest: watch.setup.translation.digest,
    resource: watch.template,
    result,
    atMs: clock(),
    differences: detail.differences ?? [],
    ...(detail.reason === undefined ? {} : { reason: detail.reason }),
    request: watch.request,
    requestId: watch.requestId,
    showValues: watch.setup.settings.show_values,
  });

  const record = (done: ComparisonOutcome): void => {
    if (!closed) records.record(done);
  };

  /** The successor's answer to the watched request, read whole within the limits; throws Failed. */
  const askSuccessor = async (watch: Watch): Promise<SuccessorAnswer> => {
    const timeoutMs = watch.setup.settings.timeout_ms;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const response = await pool.request({
        method: watch.method,
        path: watch.target,
        headers: watch.headers,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > maxBytes) {
          response.body.destroy();
          throw new Failed('too_large');
        }
        chunks.push(chunk);
      }
      const type = response.headers['content-type'];
      return {
        status: response.statusCode,
        type: type === undefined ? undefined : String(type),
        body: Buffer.concat(chunks, bytes),
      };
    } catch (error) {
      if (error instanceof Failed) throw error;
      const code = (error as { code?: unknown }).code;
      throw new Failed(signal.aborted || TIMEOUT_CODES.has(code) ? 'timeout' : 'unreachable');
    }
  };

  /** A JSON text read as the engine reads it; undefined when it is none (or not UTF-8). */
  const read = (bytes: Buffer): { value: unknown } | undefined =>
    isUtf8(bytes) ? readBody(bytes.toString('utf8'), maxDepth) : undefined;

  /**
   * The two answers compared: the own status against the one a translated route would send, then what that route
   * would have sent (a JSON body translated back where the declarations change it, any other as it came) against
   * the own body.
   */
  const judge = (watch: Watch, own: OwnAnswer, successor: SuccessorAnswer): ComparisonOutcome => {
    const plan = watch.setup.translation.answer(watch.template, successor.status);
    if (own.status !== plan.status)
      return outcome(watch, 'differ', {
        differences: [{ path: STATUS_PATH, own: own.status, translated: plan.status }],
      });
    if (watch.method === 'HEAD' || bodiless(own.status)) return outcome(watch, 'match');
    const ownBytes = Buffer.concat(own.chunks, own.bytes);
    const ownJson = own.type !== undefined && isJsonType(own.type);
    const successorJson = successor.type !== undefined && isJsonType(successor.type);
    const asBytes = (): ComparisonOutcome =>
      ownBytes.equals(successor.body)
        ? outcome(watch, 'match')
        : outcome(watch, 'differ', {
            differences: [
              { path: BODY_PATH, own: ownBytes.toString('utf8'), translated: successor.body.toString('utf8') },
            ],
          });
    let translated: unknown;
    const success = successor.status >= 200 && successor.status < 300;
    // A translated route reads the body when the declarations change it: a JSON one, or a 2xx without a type.
    if (
      plan.body !== undefined &&
      hasBody(successor.status) &&
      (successorJson || (success && successor.type === undefined))
    ) {
      // It refuses a typeless 2xx body, and one that is no JSON though its type says so.
      if (successor.type === undefined)
        return successor.body.length === 0 ? asBytes() : outcome(watch, 'error', { reason: 'untyped' });
      const parsed = read(successor.body);
      if (parsed === undefined) return outcome(watch, 'error', { reason: 'invalid_json' });
      translated = plan.body(parsed.value);
    } else {
      // Any other answer passes a translated route as it came: JSON is still compared as JSON.
      if (!ownJson || !successorJson) return asBytes();
      const parsed = read(successor.body);
      if (parsed === undefined) return asBytes();
      translated = parsed.value;
    }
    if (!ownJson)
      return outcome(watch, 'differ', {
        differences: [{ path: BODY_PATH, own: ownBytes.toString('utf8'), translated }],
      });
    const ownParsed = read(ownBytes);
    if (ownParsed === undefined) return outcome(watch, 'error', { reason: 'own_invalid_json' });
    const found = differences(ownParsed.value, translated, watch.setup.ignore);
    return found.length === 0 ? outcome(watch, 'match') : outcome(watch, 'differ', { differences: found });
  };

  const compare = async (watch: Watch, own: OwnAnswer): Promise<void> => {
    let done: ComparisonOutcome;
    try {
      done = judge(watch, own, await askSuccessor(watch));
    } catch (error) {
      if (error instanceof Failed || error instanceof ComparisonRefusal)
        done = outcome(watch, 'error', { reason: error.reason as ComparisonReason });
      else {
        logger.error(
          { err: error, version: watch.version, resource: watch.template },
          'comparison failed unexpectedly',
        );
        return;
      }
    } finally {
      release(watch.version);
    }
    record(done);
  };

  /** Keeps a copy of the own answer as it passes, up to TRANSLATION_MAX_BYTES; the client's stream is untouched. */
  const keepAnswer = (watch: Watch, options: FastifyReplyFromHooks): FastifyReplyFromHooks => {
    const onResponse = options.onResponse;
    return {
      ...options,
      onResponse(request, reply, raw) {
        const res = raw as unknown as UpstreamResponse;
        const type = res.headers['content-type'];
        const own: OwnAnswer = {
          status: res.statusCode,
          type: type === undefined ? undefined : String(type),
          chunks: [],
          bytes: 0,
          state: 'reading',
        };
        watch.own = own;
        // A copy is taken as each chunk passes on to the client: a 'data' listener on the backend's stream would
        // start it flowing before the client's pipe is in place, and chunks would be lost to the client.
        const tee = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            if (own.state === 'reading') {
              own.bytes += chunk.length;
              if (own.bytes > maxBytes) {
                own.state = 'too_large';
                own.chunks = [];
              } else own.chunks.push(chunk);
            }
            done(null, chunk);
          },
          flush(done) {
            if (own.state === 'reading') own.state = 'whole';
            done();
          },
        });
        res.stream.once('error', (error) => {
          own.state = 'failed';
          tee.destroy(error);
        });
        res.stream.pipe(tee);
        const passed = { statusCode: res.statusCode, headers: res.headers, stream: tee } as unknown as typeof raw;
        if (onResponse !== undefined) onResponse(request, reply, passed);
        else void (reply as FastifyReply).send(tee);
      },
    };
  };

  /** After the answer is sent (or not): the comparison starts, or the watch ends skipped. */
  const answered = (request: FastifyRequest, reply: FastifyReply): void => {
    const watch = request.comparison;
    if (watch === null) return;
    request.comparison = null;
    const own = watch.own;
    if (own === undefined || !reply.raw.writableFinished || own.state === 'failed' || own.state === 'reading') {
      release(watch.version);
      record(outcome(watch, 'skipped', { reason: 'unanswered' }));
      return;
    }
    if (own.state === 'too_large') {
      release(watch.version);
      record(outcome(watch, 'skipped', { reason: 'too_large' }));
      return;
    }
    void compare(watch, own);
  };

  return {
    records,
    watch(request, policy, version, template, options, successorTarget) {
      const setup = policy.declared === policy.translations ? undefined : setupsOf(policy).get(version);
      if (setup === undefined || closed) return options;
      const method = request.method;
      if (method !== 'GET' && method !== 'HEAD') return options;
      const route = setup.translation.route(template);
      if (route === undefined) return options;
      if (random() >= setup.settings.sample) return options;
      const watch: Watch = {
        setup,
        version,
        template,
        method,
        target: successorTarget(route),
        headers: successorHeaders(request, version),
        request: `${method} ${request.url.split('?', 1)[0] ?? ''}`,
        requestId: request.id,
        own: undefined,
      };
      const underWay = inFlight.get(version) ?? 0;
      if (underWay >= setup.settings.max_in_flight) {
        record(outcome(watch, 'skipped', { reason: 'busy' }));
        return options;
      }
      inFlight.set(version, underWay + 1);
      request.comparison = watch;
      return keepAnswer(watch, options);
    },
    figures(policy, version) {
      const setup = setupsOf(policy).get(version);
      return setup === undefined ? undefined : records.of(version, setup.translation.digest, clock());
    },
    register(app) {
      app.decorateRequest('comparison', null);
      app.addHook('onResponse', (request, reply, done) => {
        answered(request, reply);
        done();
      });
    },
    async close() {
      closed = true;
      await pool.destroy();
    },
  };
}
