import type { Server } from 'node:http';
import type { FastifyBaseLogger, FastifyHttpOptions, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The shutdown state. `leaving`: asked to stop; readiness fails and answers carry Connection: close,
     * but requests are still served (SHUTDOWN_DELAY_MS). `draining`: close() began; new requests are
     * refused. Draining implies leaving.
     */
    lifecycle: { leaving: boolean; draining: boolean };
  }
}

/** Fastify's own 503 while closing has a body that is not an ErrorResponse; the request guards answer it instead. */
export const drainingOptions: Pick<FastifyHttpOptions<Server, FastifyBaseLogger>, 'return503OnClosing'> = {
  return503OnClosing: false,
};

/**
 * The shutdown state: `app.lifecycle.leaving` is set by the process runner on SIGTERM (or by close());
 * `app.lifecycle.draining` turns true when close() begins. The request guards then refuse new requests with 503.
 */
async function drainingPlugin(app: FastifyInstance): Promise<void> {
  app.decorate('lifecycle', { leaving: false, draining: false });
  app.addHook('preClose', async () => {
    app.lifecycle.leaving = true;
    app.lifecycle.draining = true;
  });

  // Once leaving, no answer leaves its keep-alive connection open: a load balancer's next request then
  // opens a new connection, which goes to a replica still ready; and a request in flight when close()
  // began would otherwise hold close() up until the grace period, although nothing is in flight.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (app.lifecycle.leaving) void reply.header('connection', 'close');
    done(null, payload);
  });
}

export const draining = fp(drainingPlugin, { name: 'draining' });
