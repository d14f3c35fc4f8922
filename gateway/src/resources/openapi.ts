import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  API_KEY_SCHEME,
  KEY_OPTIONAL,
  KEY_REQUIRED,
  apiKeySecurityScheme,
} from '@version-router/platform/api-document';
import { sendError } from '@version-router/platform/errors';
import { isObject } from '../translation/body-plan.js';
import { OPERATION_METHODS, deriveDocument } from '../translation/derive-document.js';
import { readUpstreamBody, type UpstreamResponse } from '../proxy/backend.js';
import type { VersionAnswer, VersionPolicy } from '../versions/policy.js';

/**
 * The one resource whose body the gateway changes: the backend's OpenAPI document of a version knows
 * nothing of the policy, so the gateway adds what the policy says of the version: the API-Key scheme it
 * checks and a deprecated version's lifecycle; for a version declared as changes it derives the whole
 * document from the successor's that the backend served (docs/client-documents.md#openapi-documents).
 */
export const OPENAPI_RESOURCE = '/openapi.json';

type Json = Record<string, unknown>;
type OpenApiDocument = Json & {
  info?: Json;
  paths?: Record<string, unknown>;
  components?: Json & { securitySchemes?: Json; headers?: Json; responses?: Json };
};

/** The name of the 410 in `components.responses`. */
const GONE_RESPONSE = 'VersionGone';

/** The fields the policy adds to the document of one version. */
interface Annotation {
  version: number;
  /** The version answers only requests with a key (`consumer_key: "required"`). */
  keyRequired: boolean;
  /** Set for a version in the deprecated phase: its operations are marked, the lifecycle added. */
  deprecation: { sunset: number | null; successor: number | null; headers: ReadonlyMap<string, string> } | null;
}

/** `x-sunset` (RFC 3339) and `x-successor-version`, each when the policy gives it. */
function lifecycleExtensions({ sunset, successor }: NonNullable<Annotation['deprecation']>): Json {
  return {
    ...(sunset === null ? {} : { 'x-sunset': new Date(sunset).toISOString() }),
    ...(successor === null ? {} : { 'x-successor-version': successor }),
  };
}

/**
 * A deprecated version's response headers and its 410, each once in `components`, with this policy's values as
 * examples.
 */
function deprecationComponents(
  { successor, headers }: NonNullable<Annotation['deprecation']>,
  version: number,
): { headers: Json; responses: Json } {
  const header = (description: string, value: string | undefined): Json => ({
    description,
    schema: { type: 'string' },
    ...(value === undefined ? {} : { example: value }),
  });
  const componentHeaders: Json = {
    Deprecation: header('The version is deprecated (RFC 9745).', headers.get('deprecation')),
    Sunset: header(
      'When the version is removed; from then on its requests are answered 410 (RFC 8594).',
      headers.get('sunset'),
    ),
  };
  if (successor !== null) {
    componentHeaders.Link = header(
      `\`<…/v${successor}/…>; rel="successor-version"\`: the same resource in version ${successor}; the policy's ` +
        `deprecation and sunset links besides.`,
      undefined,
    );
  }
  const gone = {
    description:
      `Version ${version} is browned out for a while (\`version_brownout\`), or removed from its sunset ` +
      `on (\`version_removed\`).`,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          title: 'ErrorResponse',
          properties: {
            error: { type: 'string', enum: ['version_brownout', 'version_removed'] },
            code: { type: 'integer', enum: [410] },
            details: { type: 'string', description: 'Until when, or since when, and which version to use instead.' },
          },
          required: ['error', 'code', 'details'],
        },
      },
    },
  };
  return { headers: componentHeaders, responses: { [GONE_RESPONSE]: gone } };
}

/** A deprecated operation: marked, its 410 added, each response of its own with the deprecation headers. */
function deprecatedOperation(operation: Json, headerNames: readonly string[]): Json {
  const headerRefs = Object.fromEntries(headerNames.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
  const responses: Json = {};
  for (const [status, response] of Object.entries(isObject(operation.responses) ? operation.responses : {})) {
    // A response by reference is shared with operations that are not deprecated: left as it is.
    responses[status] =
      isObject(response) && !('$ref' in response)
        ? { ...response, headers: { ...(isObject(response.headers) ? response.headers : {}), ...headerRefs } }
        : response;
  }
  responses['410'] = { $ref: `#/components/responses/${GONE_RESPONSE}` };
  return { ...operation, deprecated: true, responses };
}

/**
 * The document as the gateway serves it: the `ApiKey` scheme declared, optional on the whole document
 * (`/api/users` never requires a key) and required on the version's own operations (`/v{n}/…` and
 * `/api/v{n}/…`) when the policy requires it; for a deprecated version its own operations (never the
 * unversioned ones) `deprecated: true` with their 410 and the Deprecation, Sunset and Link headers, and the
 * lifecycle as top-level extensions `x-sunset` and `x-successor-version`.
 */
function annotate(document: OpenApiDocument, { version, keyRequired, deprecation }: Annotation): OpenApiDocument {
  const versioned = new RegExp(`^(?:/api)?/v${version}(?:/|$)`);
  const deprecationParts = deprecation === null ? null : deprecationComponents(deprecation, version);
  const headerNames = Object.keys(deprecationParts?.headers ?? {});
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!isObject(item) || !versioned.test(path)) {
      paths[path] = item;
      continue;
    }
    const annotated: Json = { ...item };
    for (const method of OPERATION_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const marked = deprecation === null ? operation : deprecatedOperation(operation, headerNames);
      annotated[method] = keyRequired ? { ...marked, security: KEY_REQUIRED } : marked;
    }
    paths[path] = annotated;
  }
  const components = document.components ?? {};
  return {
    ...document,
    ...(deprecation === null ? {} : lifecycleExtensions(deprecation)),
    components: {
      ...components,
      securitySchemes: { ...components.securitySchemes, [API_KEY_SCHEME]: apiKeySecurityScheme },
      ...(deprecationParts === null
        ? {}
        : {
            headers: { ...components.headers, ...deprecationParts.headers },
            responses: { ...components.responses, ...deprecationParts.responses },
          }),
    },
    security: KEY_OPTIONAL,
    paths,
  };
}

/**
 * The requested version's document from the one the backend answered: a version declared as changes is
 * forwarded to the first successor without changes, whose document (its `info.version` says which) is
 * derived back down the chain. A backend that still serves the version's own document is taken at its word.
 */
function ownDocument(upstream: OpenApiDocument, version: number, policy: VersionPolicy): OpenApiDocument {
  const { served, steps } = policy.translations.chain(version);
  if (steps.length === 0 || upstream.info?.version !== String(served)) return upstream;
  return deriveDocument(upstream, steps) as OpenApiDocument;
}

/**
 * Upstream text and its annotation per policy answer (version, policy and period), so a repeat costs one comparison.
 */
const annotatedByAnswer = new WeakMap<VersionAnswer, { upstream: string; annotated: string }>();

function annotatedText(answer: VersionAnswer, policy: VersionPolicy, upstream: string): string {
  // A document is forwarded only for an answer that names a version.
  if (answer.version === null) return upstream;
  const cached = annotatedByAnswer.get(answer);
  if (cached?.upstream === upstream) return cached.annotated;
  let parsed: unknown;
  try {
    parsed = JSON.parse(upstream);
  } catch {
    // Not a JSON document: not ours to change.
    return upstream;
  }
  if (!isObject(parsed)) return upstream;
  const annotated = JSON.stringify(
    annotate(ownDocument(parsed, answer.version, policy), {
      version: answer.version,
      keyRequired: answer.keyRequired,
      deprecation:
        answer.phase === 'deprecated'
          ? { sunset: answer.sunset, successor: answer.successor, headers: new Map(answer.headers) }
          : null,
    }),
  );
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
      // The chain is the policy's in force now; a reload since the request arrived changes the next request's answer
      // too.
      const { policy } = (request as FastifyRequest).server.versionPolicies.current;
      readUpstreamBody(ours, stream, (upstream) => {
        let text: string;
        try {
          text = annotatedText(answer, policy, upstream.toString());
        } catch (error) {
          // A document the walks cannot handle (nested deeper than the stack allows): never out of the stream's end.
          request.log.warn({ err: error }, 'the upstream OpenAPI document could not be annotated');
          void sendError(ours.removeHeader('content-length').removeHeader('transfer-encoding'), 502, 'bad gateway');
          return;
        }
        void ours.removeHeader('content-length').removeHeader('transfer-encoding').send(text);
      });
    },
  };
}
