import { z } from 'zod';

/**
 * The stored order (a record of the orders' seed file, ORDERS_FILE), independent of any API version's representation.
 */
export const orderSchema = z.strictObject({
  id: z.string().min(1),
  customer_id: z.string().min(1),
  total_cents: z.int(),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as EUR'),
});

export type Order = z.output<typeof orderSchema>;
