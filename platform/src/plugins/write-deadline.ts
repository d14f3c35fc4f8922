import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { serverLimits } from '../server-limits.js';

/**
 * Go-style write deadline: a response not finished within the write timeout of its request's arrival loses
 * its connection, so a client that stops reading cannot hold a response (and its upstream) open.
 */
async function writeDeadlinePlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', (request, reply, done) => {
    const deadline = setTimeout(() => {
      request.log.warn('write timeout exceeded, closing connection');
      request.raw.socket.destroy();
    }, serverLimits.writeTimeoutMs);
    reply.raw.once('close', () => clearTimeout(deadline));
    done();
  });
}

export const writeDeadline = fp(writeDeadlinePlugin, { name: 'write-deadline' });
