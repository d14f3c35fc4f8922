// A module that never returns on its example: refused when loaded, after the check's time limit.
export const forward = (body) => body;
export function backward(body) {
  for (;;) if (body === undefined) return body;
}
export const examples = [{ id: 'a' }];
