import type { Order } from './order.js';

/** The version-independent business logic: versions differ only in their presenters, never here. */
export class OrderService {
  private readonly byId: ReadonlyMap<string, Order>;

  constructor(orders: readonly Order[]) {
    this.byId = new Map(orders.map((order) => [order.id, order]));
  }

  find(id: string): Order | undefined {
    return this.byId.get(id);
  }
}
