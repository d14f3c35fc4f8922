import type { FastifyInstance } from 'fastify';
import { onTestFinished } from 'vitest';
import type { Clock } from '@version-router/platform/clock';
import { createLogger } from '@version-router/platform/logger';
import { buildApp, type BuildAppOptions } from '../src/app.js';
import type { Order } from '../src/orders/order.js';
import { orderPresenters } from '../src/orders/presenters.js';
import { seedRecords } from '../src/resources/seeds.js';

const demoOrders: Order[] = [
  { id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' },
  { id: 'ord-1002', customer_id: 'user-2', total_cents: 5, currency: 'USD' },
];

/** A clock the test moves by hand, so timestamps are exact. */
export function manualClock(start = '2026-11-22T10:00:00.000Z'): { clock: Clock; advance: (ms: number) => void } {
  let now = Date.parse(start);
  return { clock: () => now, advance: (ms) => (now += ms) };
}

/**
 * A fresh app per test, closed when that test finishes (called from a test or a beforeEach; importing
 * this module registers nothing).
 */
export async function testApp(options: Partial<BuildAppOptions> = {}): Promise<FastifyInstance> {
  const app = await buildApp({
    logger: createLogger('silent', 'users-orders-test'),
    seeds: seedRecords({ orders: demoOrders }),
    clock: manualClock().clock,
    ...options,
  });
  onTestFinished(() => app.close());
  return app;
}

/** The JSON content type every JSON response must carry. */
export const JSON_TYPE = /^application\/json(;|$)/;

/** One above the highest version the backend serves: the next version, which it does not serve yet. */
export const UNSERVED_VERSION = Math.max(...orderPresenters.keys()) + 1;

/**
 * Every route the app registered, as OpenAPI path templates (`/v2/orders/{id}`), read from Fastify's printed
 * route tree: each line is one node, indented four characters per level below the node it continues.
 */
export function registeredPaths(app: FastifyInstance): string[] {
  const parents: string[] = [];
  const paths: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const node = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (node === null) continue;
    const [, indent = '', segment = '', methods] = node;
    const depth = [...indent].length / 4;
    parents.length = depth;
    const path = `${parents.join('')}${segment}`;
    parents.push(segment);
    if (methods !== undefined) paths.push(path.replace(/:(\w+)/g, '{$1}'));
  }
  return paths;
}
