import type { FastifyInstance } from 'fastify';
import { HttpError } from '../../../../platform/src/errors.js';
import type { Order } from './order.js';
import { presentOrderV1, presentOrderV2 } from './presenters.js';
import type { OrderService } from './service.js';

const presenters: Record<'v1' | 'v2', (order: Order) => object> = { v1: presentOrderV1, v2: presentOrderV2 };

/**
 * GET {prefix}/v{1,2}/orders/:id for both prefixes. No deprecation headers here: the gateway owns the
 * version policy (DESIGN "Shape").
 */
export async function orderRoutes(app: FastifyInstance, { orders }: { orders: OrderService }): Promise<void> {
  for (const prefix of ['', '/api']) {
    for (const [version, present] of Object.entries(presenters)) {
      app.get<{ Params: { id: string } }>(`${prefix}/${version}/orders/:id`, async (request, reply) => {
        const order = orders.find(request.params.id);
        if (order !== undefined) return present(order);
        // DESIGN "Orders": the /api form answers plain text, the bare form the JSON ErrorResponse.
        if (prefix === '/api') return reply.code(404).type('text/plain; charset=utf-8').send('order not found');
        throw new HttpError(404, 'order not found');
      });
    }
  }
}
