import type { Server } from 'node:http';
import type { FastifyBaseLogger, FastifyHttpOptions, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /** Set once shutdown begins; readiness and new requests consult it. */
    lifecycle: { draining: boolean };
  }
}

/** Fastify's own 503 while closing has a body that is not an ErrorResponse; the request guards answer it instead. */
export const drainingOptions: Pick<FastifyHttpOptions<Server, FastifyBaseLogger>, 'return503OnClosing'> = {
  return503OnClosing: false,
};

/**
 * The shutdown state: `app.lifecycle.draining` turns true when close() begins. The request guards then
 * refuse new requests with 503.
 */
const drainingPlugin: FastifyPluginAsync = async (app) => {
  app.decorate('lifecycle', { draining: false });
  app.addHook('preClose', async () => {
    app.lifecycle.draining = true;
  });

  // A request that was in flight when shutdown began must not leave its keep-alive connection open:
  // close() would then wait for the client (up to the grace period) although nothing is in flight.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (app.lifecycle.draining) void reply.header('connection', 'close');
    done(null, payload);
  });
};

export const draining = fp(drainingPlugin, { name: 'draining' });
