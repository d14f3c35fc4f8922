import type { onRequestHookHandler } from 'fastify';
import { KEY_IN_QUERY_ERROR } from '@version-router/platform/api-document';
import { sendError } from '@version-router/platform/errors';
import { queryKeyParameter, type QueryKeyNames } from '@version-router/platform/http-foundation';
import { keyIdOf } from './keys.js';

const hasKeyShape = (value: string): boolean => keyIdOf(value) !== undefined;

/**
 * Refuses a request whose query carries an API key under one of `names` (QUERY_KEY_PARAMETERS): 400 naming the
 * API-Key header, before any route runs, so the request is neither served anonymously nor forwarded with the key in
 * its URL. A key is recognised by its shape (`vr_…`, keys.ts), known or not, valid or revoked: the answer tells no
 * one whether a key exists, and costs no digest. A value of another shape (`?token=abc`, a backend's own parameter)
 * passes on, and only the log hides it.
 */
export function refuseKeysInQuery(names: QueryKeyNames): onRequestHookHandler {
  return (request, reply, done) => {
    const url = request.url;
    // Most requests have no query; a key is never shorter than its `vr_` prefix, which may also come encoded.
    const queryAt = url.indexOf('?');
    if (queryAt === -1 || (url.indexOf('vr_', queryAt) === -1 && url.indexOf('%', queryAt) === -1)) {
      done();
      return;
    }
    const name = queryKeyParameter(url, names, hasKeyShape);
    if (name === undefined) {
      done();
      return;
    }
    const details = `the query parameter "${name}" holds an API key; a URL is kept in logs, caches and histories`;
    void sendError(reply, 400, KEY_IN_QUERY_ERROR, details);
  };
}
