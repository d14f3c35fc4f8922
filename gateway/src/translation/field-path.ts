/**
 * The field paths of `changes` declarations (`items[].user_id`), read one way by everything that follows them: the
 * translation engine's walk over bodies, the derived documents' walk over schemas and the migration guide.
 */

/** One step of a field path: a property name, and whether the property is an array whose items go on. */
export interface FieldSegment {
  readonly name: string;
  readonly array: boolean;
}

/** `items[].user_id` → `items` (array), `user_id`. The policy file has checked the syntax already. */
export function fieldSegments(path: string): FieldSegment[] {
  return path
    .split('.')
    .map((part) => (part.endsWith('[]') ? { name: part.slice(0, -2), array: true } : { name: part, array: false }));
}

/** The last segment's name (`items[].user_id` → `user_id`). */
export function leafName(path: string): string {
  return (fieldSegments(path).at(-1) as FieldSegment).name;
}
