import type { FastifyReply } from 'fastify';

/**
 * The ErrorResponse body of every error either process answers: `code` equals the HTTP status, `details` only when
 * non-empty.
 */
export interface ErrorResponse {
  error: string;
  code: number;
  details?: string;
}

/** An error a handler throws on purpose; the root error handler turns it into an ErrorResponse. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly error: string,
    readonly details = '',
  ) {
    super(details === '' ? error : `${error}: ${details}`);
    this.name = 'HttpError';
  }
}

function errorBody(code: number, error: string, details = ''): ErrorResponse {
  return details === '' ? { error, code } : { error, code, details };
}

/** Serialised once here so every error, including those written to raw sockets, has one shape. */
export function errorJson(code: number, error: string, details = ''): string {
  return JSON.stringify(errorBody(code, error, details));
}

export function sendError(reply: FastifyReply, code: number, error: string, details = ''): FastifyReply {
  return reply
    .code(code)
    .type('application/json')
    .send(errorJson(code, error, details));
}
