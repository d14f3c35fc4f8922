import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { sendError } from '@version-router/platform/errors';
import { errorResponse } from '../contract/error-response.js';

/** The two forms every versioned resource is served in: bare (`/v{n}/…`) and under `/api` (`/api/v{n}/…`). */
export const RESOURCE_PREFIXES = ['', '/api'] as const;

export type ResourcePrefix = (typeof RESOURCE_PREFIXES)[number];

/**
 * A read-only resource's answer to an unknown id (docs/backend.md#orders): 404 with the JSON ErrorResponse
 * on the bare form, the text alone as text/plain under /api. `response` is what its routes document, `send`
 * what they answer, so the two cannot differ. `noSuch` says it in a sentence: "No order has this id".
 */
export function notFound(text: string, noSuch: string) {
  const responses = {
    '': errorResponse(404, text, `${noSuch}.`),
    '/api': {
      description: `${noSuch} (plain text).`,
      content: { 'text/plain': { schema: z.literal(text).meta({ examples: [text] }) } },
    },
  } as const;
  return {
    response: <Prefix extends ResourcePrefix>(prefix: Prefix): (typeof responses)[Prefix] => responses[prefix],
    send: (reply: FastifyReply, prefix: ResourcePrefix): FastifyReply =>
      prefix === '/api' ? reply.code(404).type('text/plain; charset=utf-8').send(text) : sendError(reply, 404, text),
  };
}
