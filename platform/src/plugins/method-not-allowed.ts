import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay from 'find-my-way';
import { sendError } from '../errors.js';

/**
 * Answers a request no route matched: 405 `method not allowed` with an Allow header when the path is a
 * route's path under another method, 404 `not found` otherwise. Fastify has no 405 of its own, so a mirror
 * of the route table answers "which methods does this path allow?". Register before any route: onRoute
 * sees only routes added after it.
 */
async function methodNotAllowedPlugin(app: FastifyInstance): Promise<void> {
  const routePaths = FindMyWay<FindMyWay.HTTPVersion.V1>();
  const methodsByUrl = new Map<string, string[]>();
  app.addHook('onRoute', (route) => {
    // A catch-all answers every path, so it says nothing about which methods a path allows.
    if (route.url === '/*') return;
    const methods = methodsByUrl.get(route.url);
    const added = ([] as string[]).concat(route.method);
    if (methods === undefined) {
      methodsByUrl.set(route.url, added);
      routePaths.on('GET', route.url, () => undefined, { url: route.url });
    } else {
      for (const method of added) if (!methods.includes(method)) methods.push(method);
    }
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '/';
    const match = routePaths.find('GET', path) as { store: { url: string } } | null;
    const allowed = match === null ? undefined : methodsByUrl.get(match.store.url);
    if (allowed !== undefined) {
      void reply.header('allow', allowed.join(', '));
      return sendError(reply, 405, 'method not allowed');
    }
    return sendError(reply, 404, 'not found');
  });
}

export const methodNotAllowed = fp(methodNotAllowedPlugin, { name: 'method-not-allowed' });
