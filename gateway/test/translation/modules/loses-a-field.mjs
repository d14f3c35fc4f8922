// A module whose round trip loses `balance`: refused when loaded.
export const forward = (body) => body;
export function backward(body) {
  if (typeof body !== 'object' || body === null) return body;
  const rest = { ...body };
  delete rest.balance;
  return rest;
}
export const examples = [{ id: 'u-1', balance: 1 }];
