import type { FastifyInstance } from 'fastify';
import { HttpError } from '../../../../platform/src/errors.js';
import { buildPage, type PageResponse } from '../pagination/page.js';
import { parsePageQuery } from '../pagination/query.js';
import type { ReceivedBody } from './body-reader.js';
import { decodeUserFields } from './decode.js';
import type { User, UserFields, UserStore } from './store.js';

export interface UserRoutesOptions {
  store: UserStore;
  /** RFC 3339 UTC with milliseconds, from the injected clock. */
  now: () => string;
}

interface IdParams {
  id: string;
}

const userNotFound = (): HttpError => new HttpError(404, 'user not found');

/** SPEC "Validation checks name first, then email"; present values only need to be non-empty. */
function validateCreate(fields: Partial<UserFields>): UserFields {
  if (fields.name === undefined || fields.name === '') throw new HttpError(422, 'validation failed', 'name is required');
  if (fields.email === undefined || fields.email === '') throw new HttpError(422, 'validation failed', 'email is required');
  return { name: fields.name, email: fields.email };
}

/** A storage failure while listing is answered with its own text (SPEC rule 4), unlike unhandled failures. */
function listing<Result>(read: () => Result): Result {
  try {
    return read();
  } catch (err) {
    throw new HttpError(500, 'listing users', err instanceof Error ? err.message : String(err));
  }
}

/** SPEC "Users" and DESIGN "Paginated listing". */
export async function userRoutes(app: FastifyInstance, { store, now }: UserRoutesOptions): Promise<void> {
  app.get('/api/users', async (): Promise<User[]> => listing(() => store.list()));

  // Registered as a static path, which find-my-way matches before /api/users/:id.
  app.get<{ Querystring: { cursor?: unknown; limit?: unknown } }>('/api/users/page', async (request): Promise<PageResponse<User>> => {
    const query = parsePageQuery(request.query);
    return listing(() => buildPage(query, (afterSeq, count) => store.listAfter(afterSeq, count)));
  });

  app.post<{ Body: ReceivedBody | undefined }>('/api/users', async (request, reply) => {
    const user = store.create(validateCreate(decodeUserFields(request.body)), now());
    return reply.code(201).header('location', `/api/users/${user.id}`).send(user);
  });

  app.get<{ Params: IdParams }>('/api/users/:id', async (request): Promise<User> => {
    const user = store.get(request.params.id);
    if (user === undefined) throw userNotFound();
    return user;
  });

  app.put<{ Params: IdParams; Body: ReceivedBody | undefined }>('/api/users/:id', async (request): Promise<User> => {
    // SPEC rule 2: decode first (400), then look up (404).
    const changes = decodeUserFields(request.body);
    const user = store.update(request.params.id, changes, now());
    if (user === undefined) throw userNotFound();
    return user;
  });

  app.delete<{ Params: IdParams }>('/api/users/:id', async (request, reply) => {
    if (!store.delete(request.params.id)) throw userNotFound();
    return reply.code(204).send();
  });
}
