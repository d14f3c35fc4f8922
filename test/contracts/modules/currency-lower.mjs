// Version 1 writes an order's currency in lower case ("eur"); its successor in upper case ("EUR").
const isObject = (body) => typeof body === 'object' && body !== null && !Array.isArray(body);

export function forward(body) {
  return isObject(body) && typeof body.currency === 'string'
    ? { ...body, currency: body.currency.toUpperCase() }
    : body;
}

export function backward(body) {
  return isObject(body) && typeof body.currency === 'string'
    ? { ...body, currency: body.currency.toLowerCase() }
    : body;
}

export const examples = [{ id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' }];
