import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '@version-router/platform/clock';
import { HttpError } from '@version-router/platform/errors';
import { errorResponse, otherErrors } from '../contract/error-response.js';
import { buildPage } from '../pagination/page.js';
import { parsePageQuery } from '../pagination/query.js';
import type { ReceivedBody } from './body-reader.js';
import { decodeUserFields } from './decode.js';
import { fingerprintOf, idempotencyKeyOf, invalidKeyDetails, type KeyedOutcome } from './idempotency/key.js';
import { jsonArrayStream } from './json-array-stream.js';
import {
  createUserHeadersSchema,
  createUserRequestSchema,
  pageQuerySchema,
  updateUserRequestSchema,
  userIdParamsSchema,
  userPageSchema,
  userSchema,
} from './schemas.js';
import { StorageUnavailableError, type MaybePromise, type User, type UserFields, type UserStore } from './store.js';

export interface UserRoutesOptions {
  store: UserStore;
  /** When users are created and updated. */
  clock: Clock;
}

const userNotFound = (): HttpError => new HttpError(404, 'user not found');

/** Validation checks name first, then email; present values only need to be non-empty. */
function validateCreate(fields: Partial<UserFields>): UserFields {
  if (fields.name === undefined || fields.name === '')
    throw new HttpError(422, 'validation failed', 'name is required');
  if (fields.email === undefined || fields.email === '')
    throw new HttpError(422, 'validation failed', 'email is required');
  return { name: fields.name, email: fields.email };
}

/** A storage failure while listing is answered with its own text, unlike unhandled failures. */
async function listing<Result>(read: () => MaybePromise<Result>): Promise<Result> {
  try {
    return await read();
  } catch (err) {
    throw new HttpError(500, 'listing users', err instanceof Error ? err.message : String(err));
  }
}

/**
 * A database that cannot be reached in time is 503 `storage unavailable` with Retry-After: 1 (no details: its
 * text names internal addresses); any other store failure stays an unhandled 500.
 */
async function stored<Result>(reply: FastifyReply, work: () => MaybePromise<Result>): Promise<Result> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof StorageUnavailableError)) throw err;
    reply.log.warn({ reason: err.message }, 'storage unavailable');
    void reply.header('retry-after', '1');
    throw new HttpError(503, 'storage unavailable');
  }
}

const userNotFoundResponse = errorResponse(404, 'user not found', 'No user has this id.');
const invalidJsonResponse = errorResponse(
  400,
  'invalid JSON',
  'The body cannot be decoded: not JSON, not an object, an unknown field, a present name/email that is not a ' +
    'string, data after the first value, or more than 1048576 bytes.',
  'unknown field "x"',
);
const listingFailedResponse = errorResponse(
  500,
  'listing users',
  'The store failed while listing; details carry its error text.',
  'store unavailable',
);
const storageUnavailableResponse = errorResponse(
  503,
  'storage unavailable',
  'The database could not be reached within 5 s; Retry-After: 1 says when to try again.',
);
const createdUserResponse = userSchema.meta({
  description:
    'The created user; with `Idempotent-Replayed: true`, the first answer to this Idempotency-Key again (nothing ' +
    'was created).',
  headers: {
    Location: { type: 'string', description: 'The new user: `/api/users/{id}`.', examples: ['/api/users/user-1'] },
    'Idempotent-Replayed': {
      type: 'string',
      enum: ['true'],
      description: 'Present only on a replay of an earlier answer to the same Idempotency-Key.',
    },
  },
});

/** What a keyed create that creates nothing answers: the first answer again, or a refusal. */
function answerKeyedOutcome(reply: FastifyReply, outcome: Exclude<KeyedOutcome, { kind: 'created' }>): FastifyReply {
  switch (outcome.kind) {
    case 'replayed':
      return reply
        .code(201)
        .header('location', `/api/users/${outcome.user.id}`)
        .header('idempotent-replayed', 'true')
        .send(outcome.user);
    case 'reused':
      throw new HttpError(422, 'idempotency key reused');
    case 'in-progress':
      void reply.header('retry-after', '1');
      throw new HttpError(409, 'request in progress');
  }
}

/** The user routes; each route's schema describes its request and every status it answers (see contract/openapi.ts). */
export async function userRoutes(app: FastifyInstance, { store, clock }: UserRoutesOptions): Promise<void> {
  const api = app.withTypeProvider<ZodTypeProvider>();
  /** created_at/updated_at: RFC 3339 UTC with milliseconds (2026-11-22T10:00:00.000Z). */
  const now = (): string => new Date(clock()).toISOString();

  // Registered without the type provider: a database listing replies with a stream, which its array schema
  // does not describe (Fastify sends streams as they are, unserialised).
  app.get(
    '/api/users',
    {
      schema: {
        operationId: 'listUsers',
        summary: 'List every user (order unspecified; in id order here)',
        tags: ['users'],
        response: {
          200: z.array(userSchema).meta({ description: 'Every user; an empty array when there are none.' }),
          500: listingFailedResponse,
          default: otherErrors,
        },
      },
    },
    async (_request, reply) => {
      const users = await listing(() => store.list());
      if (Array.isArray(users)) return users;
      // Written as it is read: the whole array of a database store never sits in memory.
      return reply.type('application/json; charset=utf-8').send(jsonArrayStream(users));
    },
  );

  // Registered as a static path, which find-my-way matches before /api/users/:id. The query is typed as
  // received (a repeated parameter arrives as an array): parsePageQuery applies the documented fallbacks.
  api.get<{ Querystring: { cursor?: unknown; limit?: unknown } }>(
    '/api/users/page',
    {
      schema: {
        operationId: 'listUsersPage',
        summary: 'One page of users, ordered by id ascending',
        tags: ['users'],
        querystring: pageQuerySchema,
        response: {
          200: userPageSchema.meta({ description: 'A page of users.' }),
          400: errorResponse(400, 'invalid cursor', 'The cursor is not one this service issued.'),
          500: listingFailedResponse,
          default: otherErrors,
        },
      },
    },
    async (request) => {
      const query = parsePageQuery(request.query);
      return listing(() => buildPage(query, (afterSeq, count) => store.listAfter(afterSeq, count)));
    },
  );

  api.post<{ Body: ReceivedBody | undefined }>(
    '/api/users',
    {
      schema: {
        operationId: 'createUser',
        summary: 'Create a user',
        tags: ['users'],
        description:
          'With an `Idempotency-Key`, the same key with the same name and email within 24 h answers the first ' +
          'answer again and creates nothing, ' +
          'so a request whose answer was lost can be sent again. The key is checked first (400), then the body is ' +
          'decoded (400) and validated (422).',
        headers: createUserHeadersSchema,
        body: createUserRequestSchema,
        response: {
          201: createdUserResponse,
          400: z
            .union([
              invalidJsonResponse,
              errorResponse(
                400,
                'invalid idempotency key',
                'The Idempotency-Key header is malformed.',
                invalidKeyDetails,
              ),
            ])
            .meta({
              description:
                'The Idempotency-Key header is malformed (`invalid idempotency key`), or the body cannot be decoded ' +
                '(`invalid JSON`).',
            }),
          409: errorResponse(
            409,
            'request in progress',
            'The first request with this Idempotency-Key is still running; Retry-After: 1 says when to try again.',
          ),
          422: z
            .union([
              errorResponse(
                422,
                'validation failed',
                'name or email is missing or empty (name is checked first).',
                'name is required',
              ),
              errorResponse(
                422,
                'idempotency key reused',
                'This Idempotency-Key was used in the last 24 h with another name or email.',
              ),
            ])
            .meta({
              description:
                'name or email is missing or empty (`validation failed`), or the Idempotency-Key was used with ' +
                'another name or email (`idempotency key reused`).',
            }),
          503: storageUnavailableResponse,
          default: otherErrors,
        },
      },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request.headers);
      const fields = validateCreate(decodeUserFields(request.body));
      let user: User;
      if (key === undefined) user = await stored(reply, () => store.create(fields, now()));
      else {
        const outcome = await stored(reply, () =>
          store.createOnce({ key, fingerprint: fingerprintOf(fields), fields }, now()),
        );
        if (outcome.kind !== 'created') return answerKeyedOutcome(reply, outcome);
        user = outcome.user;
      }
      return reply.code(201).header('location', `/api/users/${user.id}`).send(user);
    },
  );

  api.get(
    '/api/users/:id',
    {
      schema: {
        operationId: 'getUser',
        summary: 'Read a user',
        tags: ['users'],
        params: userIdParamsSchema,
        response: {
          200: userSchema.meta({ description: 'The user.' }),
          404: userNotFoundResponse,
          503: storageUnavailableResponse,
          default: otherErrors,
        },
      },
    },
    async (request, reply) => {
      const user = await stored(reply, () => store.get(request.params.id));
      if (user === undefined) throw userNotFound();
      return user;
    },
  );

  api.put<{ Params: z.output<typeof userIdParamsSchema>; Body: ReceivedBody | undefined }>(
    '/api/users/:id',
    {
      schema: {
        operationId: 'updateUser',
        summary: 'Update a user partially',
        description: 'The body is decoded first (400), then the user is looked up (404).',
        tags: ['users'],
        params: userIdParamsSchema,
        body: updateUserRequestSchema,
        response: {
          200: userSchema.meta({ description: 'The updated user.' }),
          400: invalidJsonResponse,
          404: userNotFoundResponse,
          503: storageUnavailableResponse,
          default: otherErrors,
        },
      },
    },
    async (request, reply) => {
      // Decode first (400), then look up (404).
      const changes = decodeUserFields(request.body);
      const user = await stored(reply, () => store.update(request.params.id, changes, now()));
      if (user === undefined) throw userNotFound();
      return user;
    },
  );

  api.delete(
    '/api/users/:id',
    {
      schema: {
        operationId: 'deleteUser',
        summary: 'Delete a user',
        tags: ['users'],
        params: userIdParamsSchema,
        response: {
          204: z.undefined().meta({ description: 'Deleted; no body.' }),
          404: userNotFoundResponse,
          503: storageUnavailableResponse,
          default: otherErrors,
        },
      },
    },
    async (request, reply) => {
      if (!(await stored(reply, () => store.delete(request.params.id)))) throw userNotFound();
      return reply.code(204).send();
    },
  );
}
