import { z } from 'zod';
import type { Order } from './order.js';

/** Order, version 2 representation: exactly these fields. */
export const orderV2Schema = z
  .object({
    id: z.string(),
    customer_id: z.string().meta({ description: 'Renamed from user_id.' }),
    total_cents: z.int().meta({ description: 'Amount in cents.' }),
    currency: z.string().meta({ description: 'ISO 4217 code. New in version 2.' }),
  })
  .meta({
    title: 'OrderV2',
    examples: [{ id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' }],
  });

/** One API major version's view of an order: the schema its documents publish and the function that fills it. */
export interface OrderPresenter<Schema extends z.ZodType = z.ZodType> {
  schema: Schema;
  present: (order: Order) => z.output<Schema>;
}

export function presenter<Schema extends z.ZodType>(
  schema: Schema,
  present: (order: Order) => z.output<Schema>,
): OrderPresenter<Schema> {
  return { schema, present };
}

/**
 * The order representations the backend serves, keyed by API major version: only the newest. An older version
 * is declared in the gateway's policy as changes from its successor and presented there, so it costs no code
 * here; a new major version replaces this entry, and its routes and its OpenAPI document follow from it
 * (docs/architecture.md#adding-a-version-3).
 */
export const orderPresenters: ReadonlyMap<number, OrderPresenter> = new Map<number, OrderPresenter>([
  [
    2,
    presenter(orderV2Schema, (order) => ({
      id: order.id,
      customer_id: order.customer_id,
      total_cents: order.total_cents,
      currency: order.currency,
    })),
  ],
]);
