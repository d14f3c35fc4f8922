import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The pattern a catch-all route matched on its own (the gateway's versioned resources), for
     * metrics and the log line; null where Fastify's router chose the route.
     */
    routeLabel: string | null;
  }
}

const UNMATCHED_ROUTE = 'unmatched';

/** The route pattern a request is counted and logged under: never the raw URL, which would explode cardinality. */
export function routeLabelOf(request: FastifyRequest): string {
  return matchedRouteOf(request) ?? UNMATCHED_ROUTE;
}

/** The route pattern the request matched; undefined when none did (a 404, a request refused before routing). */
export function matchedRouteOf(request: FastifyRequest): string | undefined {
  return request.routeLabel ?? request.routeOptions.url;
}

/** Gives every request the routeLabel a catch-all route may set. */
async function routeLabelPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('routeLabel', null);
}

export const routeLabel = fp(routeLabelPlugin, { name: 'route-label' });
