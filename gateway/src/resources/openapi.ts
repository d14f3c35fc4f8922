import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readUpstreamBody, type UpstreamResponse } from '../proxy/backend.js';
import type { VersionAnswer } from '../versions/policy.js';

/**
 * The one resource whose body the gateway changes: the backend's OpenAPI document of a version knows
 * nothing of the policy, so the gateway adds what the policy says of the version: the API-Key scheme it
 * checks, and a deprecated version's lifecycle.
 */
export const OPENAPI_RESOURCE = '/openapi.json';

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type OpenApiDocument = Record<string, unknown> & {
  paths?: Record<string, Record<string, unknown> | undefined>;
  components?: Record<string, unknown> & { securitySchemes?: Record<string, unknown> };
};

/** The name the documents give the gateway's key scheme. */
const API_KEY_SCHEME = 'ApiKey';

/** A key in the `API-Key` request header (docs/behaviour.md#keys-on-requests). */
const apiKeyScheme = {
  type: 'apiKey',
  in: 'header',
  name: 'API-Key',
  description: 'A consumer key (`vr_<key id>_<secret>`) from the gateway\'s consumer registry. A key that is malformed, unknown or revoked is answered 401 on every route.',
};

/** Either the key or nothing (`{}`: OpenAPI's "no security"), for operations that work without a key too. */
const KEY_OPTIONAL = [{ [API_KEY_SCHEME]: [] }, {}];
const KEY_REQUIRED = [{ [API_KEY_SCHEME]: [] }];

/** The fields the policy adds to the document of one version. */
interface Annotation {
  version: number;
  /** The version answers only requests with a key (`consumer_key: "required"`). */
  keyRequired: boolean;
  /** Set for a version in the deprecated phase: every operation is marked, the lifecycle added. */
  deprecation: { sunset: number | null; successor: number | null } | null;
}

/** `x-sunset` (RFC 3339) and `x-successor-version`, each when the policy gives it. */
function lifecycleExtensions({ sunset, successor }: NonNullable<Annotation['deprecation']>): Record<string, unknown> {
  return {
    ...(sunset === null ? {} : { 'x-sunset': new Date(sunset).toISOString() }),
    ...(successor === null ? {} : { 'x-successor-version': successor }),
  };
}

/**
 * The document as the gateway serves it: the `ApiKey` scheme declared, optional on the whole document
 * (`/api/users` never requires a key) and required on the version's own operations (`/v{n}/…` and
 * `/api/v{n}/…`) when the policy requires it; for a deprecated version every operation `deprecated: true`,
 * and the lifecycle as top-level extensions `x-sunset` and `x-successor-version`.
 */
function annotate(document: OpenApiDocument, { version, keyRequired, deprecation }: Annotation): OpenApiDocument {
  const versioned = new RegExp(`^(?:/api)?/v${version}(?:/|$)`);
  const paths: Record<string, Record<string, unknown> | undefined> = {};
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (item === undefined || item === null || typeof item !== 'object') {
      paths[path] = item;
      continue;
    }
    const marks = {
      ...(deprecation === null ? {} : { deprecated: true }),
      ...(keyRequired && versioned.test(path) ? { security: KEY_REQUIRED } : {}),
    };
    const annotated: Record<string, unknown> = { ...item };
    for (const method of OPERATION_METHODS) {
      const operation = item[method];
      if (operation !== null && typeof operation === 'object') annotated[method] = { ...operation, ...marks };
    }
    paths[path] = annotated;
  }
  const components = document.components ?? {};
  return {
    ...document,
    ...(deprecation === null ? {} : lifecycleExtensions(deprecation)),
    components: { ...components, securitySchemes: { ...components.securitySchemes, [API_KEY_SCHEME]: apiKeyScheme } },
    security: KEY_OPTIONAL,
    paths,
  };
}

/** Upstream text and its annotation per policy answer (version, policy and period), so a repeat costs one comparison. */
const annotatedByAnswer = new WeakMap<VersionAnswer, { upstream: string; annotated: string }>();

function annotatedText(answer: VersionAnswer, upstream: string): string {
  // A document is forwarded only for an answer that names a version.
  if (answer.version === null) return upstream;
  const cached = annotatedByAnswer.get(answer);
  if (cached?.upstream === upstream) return cached.annotated;
  let annotated: string;
  try {
    annotated = JSON.stringify(
      annotate(JSON.parse(upstream) as OpenApiDocument, {
        version: answer.version,
        keyRequired: answer.keyRequired,
        deprecation: answer.phase === 'deprecated' ? { sunset: answer.sunset, successor: answer.successor } : null,
      }),
    );
  } catch {
    // Not a JSON document: not ours to change.
    return upstream;
  }
  annotatedByAnswer.set(answer, { upstream, annotated });
  return annotated;
}

/**
 * reply-from options for a version's document: a 200 to a GET is read whole, annotated and sent with its
 * new length; anything else streams on untouched.
 */
export function openApiReplyOptions(base: FastifyReplyFromHooks): FastifyReplyFromHooks {
  return {
    ...base,
    onResponse(request, reply, response) {
      const ours = reply as FastifyReply;
      const { statusCode, stream } = response as unknown as UpstreamResponse;
      const answer = (request as FastifyRequest).apiVersion;
      if (answer === null || statusCode !== 200 || request.method !== 'GET') {
        void ours.send(stream);
        return;
      }
      readUpstreamBody(ours, stream, (upstream) => {
        void ours.removeHeader('content-length').removeHeader('transfer-encoding').send(annotatedText(answer, upstream.toString()));
      });
    },
  };
}
