/**
 * The parts of the API's OpenAPI documents that describe the gateway in front of every route, defined once:
 * the backend's generator puts them in each version's document (so the committed documents say them), and
 * the gateway refers to them when it annotates a document on its way out.
 */

/** The name the documents give the gateway's key scheme (`components.securitySchemes`). */
export const API_KEY_SCHEME = 'ApiKey';

/** The 400 of a key sent in the query string (docs/consumers.md#api-keys-in-the-query-string). */
export const KEY_IN_QUERY_ERROR = 'API key belongs in the API-Key header';

/** A key in the `API-Key` request header (docs/consumers.md#keys-on-requests). */
export const apiKeySecurityScheme = {
  type: 'apiKey',
  in: 'header',
  name: 'API-Key',
  description:
    "A consumer key (`vr_<key id>_<secret>`) from the gateway's consumer registry. A key that is malformed, unknown " +
    'or revoked is answered 401 on every route; a key sent in the query string instead (`api_key`, `apiKey`, `key`, ' +
    `\`token\`) is answered 400 \`${KEY_IN_QUERY_ERROR}\`.`,
} as const;

/**
 * Either the key or nothing (`{}`: OpenAPI's "no security"): every operation works without a key unless its version
 * requires one.
 */
export const KEY_OPTIONAL: readonly Record<string, never[]>[] = [{ [API_KEY_SCHEME]: [] }, {}];
export const KEY_REQUIRED: readonly Record<string, never[]>[] = [{ [API_KEY_SCHEME]: [] }];

/** The 401 every route can answer (`components.responses`), and the texts the gateway answers it with. */
export const UNAUTHORIZED_RESPONSE = 'Unauthorized';
export const KEY_REQUIRED_ERROR = 'API key required';
export const INVALID_KEY_ERROR = 'invalid API key';

export const unauthorizedResponse = {
  description:
    `The \`API-Key\` is malformed, unknown or revoked (\`${INVALID_KEY_ERROR}\`), or absent where the ` +
    `version requires one (\`${KEY_REQUIRED_ERROR}\`).`,
  headers: {
    'WWW-Authenticate': {
      description: 'The scheme to authenticate with.',
      schema: { type: 'string', enum: ['API-Key'] },
    },
  },
  content: {
    'application/json': {
      schema: {
        type: 'object',
        title: 'ErrorResponse',
        properties: {
          error: { type: 'string', enum: [INVALID_KEY_ERROR, KEY_REQUIRED_ERROR] },
          code: { type: 'integer', enum: [401] },
        },
        required: ['error', 'code'],
      },
      example: { error: INVALID_KEY_ERROR, code: 401 },
    },
  },
} as const;

/**
 * Where the paths are: relative to the address the document was fetched from, since the same document is
 * served by every gateway replica under whatever name its clients reach it.
 */
export const servers = [{ url: '/', description: 'The gateway this document was fetched from.' }] as const;
