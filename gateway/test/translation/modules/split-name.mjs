// Version 1 has one `name`; its successor splits it into `first_name` and `last_name` (at the first space).
// A change no declaration can say: the policy names this module in a `module` change.

/** This version's body as the successor's. */
export function forward(body) {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof body.name !== 'string') return body;
  const { name, ...rest } = body;
  const space = name.indexOf(' ');
  return space === -1
    ? { ...rest, first_name: name, last_name: '' }
    : { ...rest, first_name: name.slice(0, space), last_name: name.slice(space + 1) };
}

/** The successor's body as this version's. */
export function backward(body) {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof body.first_name !== 'string')
    return body;
  const { first_name: first, last_name: last, ...rest } = body;
  return { ...rest, name: typeof last === 'string' && last !== '' ? `${first} ${last}` : first };
}

/** The successor's body schema as this version's: one name instead of two. */
export function schema(successor) {
  if (typeof successor !== 'object' || successor === null || typeof successor.properties !== 'object') return successor;
  const properties = { ...successor.properties };
  if (properties.first_name === undefined) return successor;
  delete properties.first_name;
  delete properties.last_name;
  const required = (successor.required ?? []).filter((name) => name !== 'first_name' && name !== 'last_name');
  return {
    ...successor,
    properties: { ...properties, name: { type: 'string', description: 'First and last name, one space between.' } },
    required: [...required, 'name'],
  };
}

/** Bodies of the successor the round trip is checked on when the module is loaded. */
export const examples = [
  { id: 'u-1', first_name: 'Ada', last_name: 'Lovelace', balance: 12.5 },
  { id: 'u-2', first_name: 'Plato', last_name: '' },
];
