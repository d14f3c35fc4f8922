import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readUpstreamBody, type UpstreamResponse } from '../proxy/backend.js';
import type { VersionAnswer } from '../versions/policy.js';

/**
 * The one resource whose body the gateway changes: the backend's OpenAPI document of a version knows
 * nothing of the policy, so the gateway marks a deprecated version's document as deprecated.
 */
export const OPENAPI_RESOURCE = '/openapi.json';

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type OpenApiDocument = Record<string, unknown> & { paths?: Record<string, Record<string, unknown> | undefined> };

/** Every operation `deprecated: true`, and the lifecycle as top-level extensions `x-sunset` and `x-successor-version`. */
function annotateDeprecated(document: OpenApiDocument, sunset: number | null, successor: number | null): OpenApiDocument {
  const paths: Record<string, Record<string, unknown> | undefined> = {};
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (item === undefined || item === null || typeof item !== 'object') {
      paths[path] = item;
      continue;
    }
    const annotated: Record<string, unknown> = { ...item };
    for (const method of OPERATION_METHODS) {
      const operation = item[method];
      if (operation !== null && typeof operation === 'object') annotated[method] = { ...operation, deprecated: true };
    }
    paths[path] = annotated;
  }
  return {
    ...document,
    ...(sunset === null ? {} : { 'x-sunset': new Date(sunset).toISOString() }),
    ...(successor === null ? {} : { 'x-successor-version': successor }),
    paths,
  };
}

/** Upstream text and its annotation per policy answer (version, policy and period), so a repeat costs one comparison. */
const annotatedByAnswer = new WeakMap<VersionAnswer, { upstream: string; annotated: string }>();

function annotatedText(answer: VersionAnswer, upstream: string): string {
  const cached = annotatedByAnswer.get(answer);
  if (cached?.upstream === upstream) return cached.annotated;
  let annotated: string;
  try {
    annotated = JSON.stringify(annotateDeprecated(JSON.parse(upstream) as OpenApiDocument, answer.sunset, answer.successor));
  } catch {
    // Not a JSON document: not ours to change.
    return upstream;
  }
  annotatedByAnswer.set(answer, { upstream, annotated });
  return annotated;
}

/**
 * reply-from options for the document of a deprecated version: a 200 to a GET is read whole, annotated
 * and sent with its new length; anything else streams on untouched.
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
