import { z } from 'zod';
import { readJsonFile } from '@version-router/platform/config';

/** The stored order (read from ORDERS_FILE at start), independent of any API version's representation. */
const orderSchema = z.strictObject({
  id: z.string().min(1),
  customer_id: z.string().min(1),
  total_cents: z.int(),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as EUR'),
});

export type Order = z.output<typeof orderSchema>;

const ordersFileSchema = z.array(orderSchema).superRefine((orders, ctx) => {
  const seen = new Set<string>();
  orders.forEach((order, index) => {
    if (seen.has(order.id)) ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `duplicate order id "${order.id}"` });
    seen.add(order.id);
  });
});

/** Reads ORDERS_FILE (main.ts, at start); any problem is a ConfigError naming ORDERS_FILE, the file and the JSON path of the problem. */
export function readOrdersFile(path: string): Order[] {
  return readJsonFile('ORDERS_FILE', path, ordersFileSchema);
}
