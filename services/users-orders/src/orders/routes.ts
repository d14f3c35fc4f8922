import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '@version-router/platform/errors';
import { errorResponse, otherErrors } from '../contract/error-response.js';
import type { OrderPresenter } from './presenters.js';
import type { OrderService } from './service.js';

const NOT_FOUND = 'order not found';

const orderIdParamsSchema = z.object({ id: z.string().meta({ examples: ['ord-1001'] }) });

/** The bare form answers the JSON ErrorResponse, the /api form plain text (docs/behaviour.md#orders). */
const notFoundResponses = {
  '': errorResponse(404, NOT_FOUND, 'No order has this id.'),
  '/api': { description: 'No order has this id (plain text).', content: { 'text/plain': { schema: z.literal(NOT_FOUND).meta({ examples: [NOT_FOUND] }) } } },
} as const;

/**
 * GET {prefix}/v{n}/orders/:id for each version's presenter and both prefixes. No deprecation headers here:
 * the gateway owns the version policy.
 */
export async function orderRoutes(app: FastifyInstance, { orders, presenters }: { orders: OrderService; presenters: ReadonlyMap<number, OrderPresenter> }): Promise<void> {
  const api = app.withTypeProvider<ZodTypeProvider>();
  for (const [version, { schema, present }] of presenters) {
    for (const prefix of ['', '/api'] as const) {
      api.get(
        `${prefix}/v${version}/orders/:id`,
        {
          schema: {
            operationId: prefix === '' ? 'getOrder' : 'getOrderApiPrefixed',
            summary: `Read an order in the version ${version} representation`,
            tags: ['orders'],
            params: orderIdParamsSchema,
            response: { 200: schema.meta({ description: `The order, version ${version} representation.` }), 404: notFoundResponses[prefix], default: otherErrors },
          },
        },
        async (request, reply) => {
          const order = orders.find(request.params.id);
          if (order !== undefined) return present(order);
          if (prefix === '/api') return reply.code(404).type('text/plain; charset=utf-8').send(NOT_FOUND);
          throw new HttpError(404, NOT_FOUND);
        },
      );
    }
  }
}
