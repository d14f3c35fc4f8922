import { KEY_REQUIRED, UNAUTHORIZED_RESPONSE } from './api-document.js';

/**
 * The gateway's own operations on the API port, as the API's OpenAPI documents describe them: a consumer reads,
 * moves and rolls back its pin with its own key (docs/consumers.md#pins). The gateway answers them, not the
 * backend, so the backend's generator adds these parts to each version's document beside the other gateway parts
 * (@version-router/platform/api-document); the pin is the same in every version, so is this part. The prose names
 * no version number: a derived document rewords "version 2" into its own.
 */

const errorDetails = {
  type: 'string',
  minLength: 1,
  description: 'Present only when non-empty: what was refused, and why.',
} as const;

/** An ErrorResponse whose `error` is one of `errors` and whose `code` is the status. */
function errorSchema(code: number, errors: readonly string[]) {
  return {
    type: 'object',
    title: 'ErrorResponse',
    properties: {
      error: { type: 'string', enum: errors },
      code: { type: 'integer', enum: [code] },
      details: errorDetails,
    },
    required: ['error', 'code'],
  } as const;
}

const json = (schema: object, example: object) => ({ 'application/json': { schema, example } });
const ref = (kind: 'schemas' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const dateTimeOrNull = (description: string) =>
  ({ type: ['string', 'null'], format: 'date-time', description }) as const;
const versionOrNull = (description: string) => ({ type: ['integer', 'null'], minimum: 1, description }) as const;

const PIN_EXAMPLE = {
  id: 'acme',
  name: 'Acme',
  pinned_version: 2,
  previous_version: 1,
  pinned_at: '2026-11-23T09:00:00.000Z',
  rollback_until: '2026-11-26T09:00:00.000Z',
} as const;

const UNSUPPORTED = { error: 'unsupported version', code: 422, details: 'versions one may pin: 1, 2' } as const;

/** The 429 of a consumer past PIN_CHANGES_PER_MINUTE changes of its pin (the gateway answers it with this text). */
export const TOO_MANY_PIN_CHANGES_ERROR = 'too many requests';

const schemas = {
  ConsumerPin: {
    type: 'object',
    title: 'ConsumerPin',
    description:
      "The consumer's pin: the version its requests that name none are served. Rolling back returns to " +
      '`previous_version` until `rollback_until`.',
    properties: {
      id: { type: 'string', description: "The consumer's id in the registry." },
      name: { type: 'string' },
      pinned_version: versionOrNull(
        'The version its requests that name none get; null for a consumer registered before pins, which follows ' +
          'the default version until it pins one.',
      ),
      previous_version: versionOrNull(
        'The version the last move left, which a rollback goes back to; null before any move and after a rollback.',
      ),
      pinned_at: dateTimeOrNull('When the pin last changed (registration, a move or a rollback).'),
      rollback_until: dateTimeOrNull('72 h after the last move, while there is a `previous_version`; else null.'),
    },
    required: ['id', 'name', 'pinned_version', 'previous_version', 'pinned_at', 'rollback_until'],
  },
  PinRequest: {
    type: 'object',
    title: 'PinRequest',
    description:
      'The version to pin: one the gateway lists and has not removed. Read as JSON whatever the `Content-Type`; ' +
      'unknown fields are rejected (400).',
    properties: { version: { type: 'integer' } },
    required: ['version'],
    additionalProperties: false,
  },
  UnsupportedVersionError: {
    ...errorSchema(422, ['unsupported version']),
    description: 'The version is not listed, or removed: `details` lists the versions one may pin.',
  },
} as const;

const headers = {
  PinCacheControl: {
    description: "`no-store`: the answer is one consumer's, never kept by a cache.",
    schema: { type: 'string', enum: ['no-store'] },
  },
  PinVary: {
    description: '`API-Key`: the answer depends on the key.',
    schema: { type: 'string', enum: ['API-Key'] },
  },
  PinRetryAfter: {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer', enum: [1] },
  },
  PinChangesRetryAfter: {
    description: "Seconds until the consumer's minute of pin changes is over.",
    schema: { type: 'integer', minimum: 1, maximum: 60 },
  },
} as const;

const responses = {
  ConsumerPin: {
    description: "The consumer's pin as it now stands.",
    headers: { 'Cache-Control': ref('headers', 'PinCacheControl'), Vary: ref('headers', 'PinVary') },
    content: json(ref('schemas', 'ConsumerPin'), PIN_EXAMPLE),
  },
  PinBodyInvalid: {
    description:
      'The body cannot be decoded: not JSON, not an object, an unknown field, a version that is no integer, or ' +
      'more than 1 MiB.',
    content: json(errorSchema(400, ['invalid JSON']), {
      error: 'invalid JSON',
      code: 400,
      details: 'unknown field "x"',
    }),
  },
  PinVersionClosed: {
    description:
      'The version is closed to new consumers, and this consumer did not use it before it closed: `details` ' +
      'names its successor.',
    content: json(errorSchema(403, ['version closed to new consumers']), {
      error: 'version closed to new consumers',
      code: 403,
      details: 'version 1 takes no new consumers since Tue, 01 Sep 2026 00:00:00 GMT; use version 2',
    }),
  },
  PinRequestUnprocessable: {
    description:
      'The body has no version (`validation failed`), or names one that is not listed or is removed ' +
      '(`unsupported version`).',
    content: {
      'application/json': {
        schema: {
          anyOf: [
            {
              ...errorSchema(422, ['validation failed']),
              description: 'The body names no version.',
              examples: [{ error: 'validation failed', code: 422, details: 'version is required' }],
            },
            ref('schemas', 'UnsupportedVersionError'),
          ],
        },
        example: UNSUPPORTED,
      },
    },
  },
  PinVersionUnsupported: {
    description: 'The version to go back to is no longer listed, or removed.',
    content: json(ref('schemas', 'UnsupportedVersionError'), UNSUPPORTED),
  },
  PinStoreUnavailable: {
    description:
      'The consumer store cannot be reached (`storage unavailable`, with `Retry-After`): the pins known keep ' +
      'being served, but none can be read or changed. Also `service unavailable` while the gateway shuts down.',
    headers: { 'Retry-After': ref('headers', 'PinRetryAfter') },
    content: json(errorSchema(503, ['storage unavailable', 'service unavailable']), {
      error: 'storage unavailable',
      code: 503,
    }),
  },
  PinChangesTooMany: {
    description:
      'The consumer changed its pin (moves and rollbacks together, with any of its keys) as often as a minute ' +
      'allows on this gateway replica (10 by default): try again after `Retry-After` seconds.',
    headers: {
      'Retry-After': ref('headers', 'PinChangesRetryAfter'),
      'Cache-Control': ref('headers', 'PinCacheControl'),
    },
    content: json(errorSchema(429, [TOO_MANY_PIN_CHANGES_ERROR]), {
      error: TOO_MANY_PIN_CHANGES_ERROR,
      code: 429,
      details: 'at most 10 pin changes a minute per consumer; try again in 37 s',
    }),
  },
  GatewayError: {
    description: 'Any other error the gateway answers (e.g. 500 `internal error`), with `code` equal to the status.',
    content: json(
      {
        type: 'object',
        title: 'ErrorResponse',
        properties: { error: { type: 'string' }, code: { type: 'integer' }, details: errorDetails },
        required: ['error', 'code'],
      },
      { error: 'internal error', code: 500 },
    ),
  },
} as const;

const ROLLBACK_REFUSALS = [
  ['nothing to roll back', 'the pin has not moved since registration or the last rollback'],
  [
    'rollback window closed',
    'the pin moved at 2026-11-23T09:00:00.000Z; it could be rolled back until 2026-11-26T09:00:00.000Z',
  ],
  ['pin changed meanwhile', 'read GET /consumer and try again'],
] as const;

const rollbackConflict = {
  description:
    'Nothing to roll back (no move since registration or the last rollback), the 72 h after the last move are ' +
    'over, or another change of the pin came first.',
  content: {
    'application/json': {
      schema: {
        anyOf: ROLLBACK_REFUSALS.map(([error, details]) => ({
          ...errorSchema(409, [error]),
          examples: [{ error, code: 409, details }],
        })),
      },
      example: { error: ROLLBACK_REFUSALS[0][0], code: 409, details: ROLLBACK_REFUSALS[0][1] },
    },
  },
} as const;

const TAG = 'consumer';
const unauthorized = ref('responses', UNAUTHORIZED_RESPONSE);

/** What every one of these operations shares: its tag, its key (required) and the answers of any call. */
const operation = (operationId: string, summary: string, description: string) => ({
  operationId,
  summary,
  description,
  tags: [TAG],
  security: KEY_REQUIRED,
});

const paths = {
  '/consumer': {
    get: {
      ...operation(
        'getConsumerPin',
        "Show the calling consumer's pin",
        'Answered by the gateway for the consumer whose `API-Key` is sent; the same in every version.',
      ),
      responses: {
        200: ref('responses', 'ConsumerPin'),
        401: unauthorized,
        503: ref('responses', 'PinStoreUnavailable'),
        default: ref('responses', 'GatewayError'),
      },
    },
  },
  '/consumer/version': {
    put: {
      ...operation(
        'moveConsumerPin',
        "Pin the calling consumer's requests that name no version to another version",
        'The pin left becomes `previous_version`, which a rollback goes back to within 72 h. Pinning the version ' +
          'the consumer is on already changes nothing. Applies on every gateway replica within 5 s.',
      ),
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('schemas', 'PinRequest'), example: { version: 2 } } },
      },
      responses: {
        200: ref('responses', 'ConsumerPin'),
        400: ref('responses', 'PinBodyInvalid'),
        401: unauthorized,
        403: ref('responses', 'PinVersionClosed'),
        422: ref('responses', 'PinRequestUnprocessable'),
        429: ref('responses', 'PinChangesTooMany'),
        503: ref('responses', 'PinStoreUnavailable'),
        default: ref('responses', 'GatewayError'),
      },
    },
  },
  '/consumer/version/rollback': {
    post: {
      ...operation(
        'rollBackConsumerPin',
        'Roll the calling consumer back to the version its last move left',
        'Within 72 h of the last move, under the same rules as a move; `previous_version` is then null (a ' +
          'rollback is not rolled back: move again).',
      ),
      responses: {
        200: ref('responses', 'ConsumerPin'),
        401: unauthorized,
        403: ref('responses', 'PinVersionClosed'),
        409: rollbackConflict,
        422: ref('responses', 'PinVersionUnsupported'),
        429: ref('responses', 'PinChangesTooMany'),
        503: ref('responses', 'PinStoreUnavailable'),
        default: ref('responses', 'GatewayError'),
      },
    },
  },
} as const;

/**
 * The pin's parts of a document: its paths, its tag, and what they share in `components`. Each operation
 * requires the `API-Key` scheme (`components.securitySchemes`, named `ApiKey`) and answers its 401
 * (`components.responses`), both defined with the other gateway parts.
 */
export const pinDocumentParts = {
  paths,
  tag: { name: TAG, description: "The calling consumer's pin, answered by the gateway; not versioned." },
  components: { schemas, headers, responses },
} as const;
