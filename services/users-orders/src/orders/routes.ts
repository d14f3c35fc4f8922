import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { otherErrors } from '../contract/error-response.js';
import { notFound, RESOURCE_PREFIXES } from '../resources/not-found.js';
import type { OrderPresenter } from './presenters.js';
import type { OrderService } from './service.js';

const orderNotFound = notFound('order not found', 'No order has this id');

const orderIdParamsSchema = z.object({ id: z.string().meta({ examples: ['ord-1001'] }) });

/**
 * GET {prefix}/v{n}/orders/:id for each version's presenter and both prefixes. No deprecation headers here:
 * the gateway owns the version policy.
 */
export async function orderRoutes(
  app: FastifyInstance,
  { orders, presenters }: { orders: OrderService; presenters: ReadonlyMap<number, OrderPresenter> },
): Promise<void> {
  const api = app.withTypeProvider<ZodTypeProvider>();
  for (const [version, { schema, present }] of presenters) {
    for (const prefix of RESOURCE_PREFIXES) {
      api.get(
        `${prefix}/v${version}/orders/:id`,
        {
          schema: {
            operationId: prefix === '' ? 'getOrder' : 'getOrderApiPrefixed',
            summary: `Read an order in the version ${version} representation`,
            tags: ['orders'],
            params: orderIdParamsSchema,
            response: {
              200: schema.meta({ description: `The order, version ${version} representation.` }),
              404: orderNotFound.response(prefix),
              default: otherErrors,
            },
          },
        },
        async (request, reply) => {
          const order = orders.find(request.params.id);
          return order === undefined ? orderNotFound.send(reply, prefix) : present(order);
        },
      );
    }
  }
}
