import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { createLogger } from '../../../platform/src/logger.js';
import { buildApp, type BuildAppOptions } from '../src/app.js';
import type { Order } from '../src/orders/order.js';

export const demoOrders: Order[] = [
  { id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' },
  { id: 'ord-1002', customer_id: 'user-2', total_cents: 5, currency: 'USD' },
];

/** A clock the test moves by hand, so timestamps are exact. */
export function manualClock(start = '2026-11-22T10:00:00.000Z'): { clock: () => Date; advance: (ms: number) => void } {
  let now = Date.parse(start);
  return { clock: () => new Date(now), advance: (ms) => (now += ms) };
}

const open: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((app) => app.close()));
});

/** A fresh app per test, closed after it. */
export async function testApp(options: Partial<BuildAppOptions> = {}): Promise<FastifyInstance> {
  const app = await buildApp({
    logger: createLogger('silent', 'users-orders-test'),
    orders: demoOrders,
    clock: manualClock().clock,
    ...options,
  });
  open.push(app);
  return app;
}

/** The JSON content type every JSON response must carry. */
export const JSON_TYPE = /^application\/json(;|$)/;
