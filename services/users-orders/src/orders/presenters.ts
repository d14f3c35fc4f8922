import type { Order } from './order.js';

/** SPEC "Order, version 1 representation": exactly these fields. */
export interface OrderV1 {
  id: string;
  user_id: string;
  total: number;
}

/** SPEC "Order, version 2 representation": exactly these fields. */
export interface OrderV2 {
  id: string;
  customer_id: string;
  total_cents: number;
  currency: string;
}

export function presentOrderV1(order: Order): OrderV1 {
  return { id: order.id, user_id: order.customer_id, total: order.total_cents / 100 };
}

export function presentOrderV2(order: Order): OrderV2 {
  return { id: order.id, customer_id: order.customer_id, total_cents: order.total_cents, currency: order.currency };
}
