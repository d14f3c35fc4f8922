// A module that recurses without end on some bodies (a stack overflow), or hands back what is no JSON.
export const forward = (body) => body;
function deeper(depth) {
  return deeper(depth + 1) + 1;
}
export function backward(body) {
  if (typeof body !== 'object' || body === null) return body;
  if (body.recurse === true) return deeper(0);
  if (body.cycle === true) {
    const cycle = { id: 'c' };
    cycle.self = cycle;
    return cycle;
  }
  if (body.function === true) return { f: () => 1 };
  if (body.huge === true) return { text: 'x'.repeat(2 * 1024 * 1024) };
  if (body.infinite === true) return { n: Infinity };
  return body;
}
export const examples = [{ id: 'a' }];
