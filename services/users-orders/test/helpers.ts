import type { FastifyInstance } from 'fastify';
import { onTestFinished } from 'vitest';
import type { Clock } from '@version-router/platform/clock';
import { createLogger } from '@version-router/platform/logger';
import { buildApp, type BuildAppOptions } from '../src/app.js';
import type { Order } from '../src/orders/order.js';

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
    orders: demoOrders,
    clock: manualClock().clock,
    ...options,
  });
  onTestFinished(() => app.close());
  return app;
}

/** The JSON content type every JSON response must carry. */
export const JSON_TYPE = /^application\/json(;|$)/;
