// A module whose backward throws on some bodies: each such answer is refused, the gateway keeps serving.
export const forward = (body) => body;
export function backward(body) {
  if (typeof body === 'object' && body !== null && body.explode === true) throw new Error('boom');
  return body;
}
export const examples = [{ id: 'a' }];
