import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { onTestFinished } from 'vitest';
import { baseServerOptions, httpFoundation } from '../src/http-foundation.js';
import { HttpError } from '../src/errors.js';
import { createLogger } from '../src/logger.js';

/**
 * A server as both processes build it (baseServerOptions + httpFoundation) with a few routes, not ready
 * yet, so a test can add its own; it closes when the test finishes.
 */
export async function buildFoundationApp(logger: Logger = createLogger('silent', 'test')): Promise<FastifyInstance> {
  const app = Fastify(baseServerOptions(logger));
  onTestFinished(() => app.close());
  await app.register(httpFoundation);
  app.get('/things/:id', async () => ({ ok: true }));
  app.put('/things/:id', async () => ({ ok: true }));
  app.get('/teapot', async () => {
    throw new HttpError(418, 'teapot', 'short and stout');
  });
  app.get('/boom', async () => {
    throw new Error('secret internal detail at /srv/db');
  });
  return app;
}
