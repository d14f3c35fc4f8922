import { z } from 'zod';
import type { ErrorResponse } from '@version-router/platform/errors';

/**
 * The ErrorResponse body as the API documents describe it. `satisfies` ties it to the envelope the error
 * handlers actually write (@version-router/platform/errors), so the two cannot drift apart.
 */
const errorResponseSchema = z
  .object({
    error: z.string().meta({ description: 'Short message.' }),
    code: z.int().meta({ description: 'Equals the HTTP status code of the response.' }),
    details: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Present only when non-empty: the detail text of the underlying failure.' }),
  })
  .meta({ title: 'ErrorResponse' }) satisfies z.ZodType<ErrorResponse>;

/**
 * The ErrorResponse of one scenario: its status and error text are fixed (`const`), so a changed text or
 * status shows up as a changed contract, and the example is the exact body the service sends.
 */
export function errorResponse(code: number, error: string, description: string, details?: string) {
  return z
    .object({
      error: z.literal(error),
      code: z.literal(code),
      details: errorResponseSchema.shape.details,
    })
    .meta({
      title: 'ErrorResponse',
      description,
      examples: [details === undefined ? { error, code } : { error, code, details }],
    });
}

/** Errors any route can answer besides its own scenarios: a request timeout, 503 while draining, 500 for a bug. */
export const otherErrors = errorResponseSchema.meta({
  description:
    'Any other error the server answers (e.g. 503 `service unavailable` while shutting down, 500 `internal error`), ' +
    'with `code` equal to the status.',
});
