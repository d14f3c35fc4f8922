// A module that loses the currency on the way back and cannot bring it back: its own examples have none, so it
// loads; the successor document's example has one, which the contract gate finds.
const isObject = (body) => typeof body === 'object' && body !== null && !Array.isArray(body);

export const forward = (body) => body;

export function backward(body) {
  if (!isObject(body)) return body;
  const rest = { ...body };
  delete rest.currency;
  return rest;
}

export const examples = [{ id: 'ord-1001', customer_id: 'user-1', total_cents: 1999 }];
