import { z } from 'zod';

/**
 * A version's `changes`: what changed between it and its successor, one entry per field, on one resource
 * template (docs/declared-versions.md "Versions declared as changes"). A closed set of operations; `field` is a
 * dotted path with `[]` for the items of an array (`items[].user_id`).
 */
const fieldPath = z
  .string()
  .regex(/^[A-Za-z_][\w-]*(\[\])?(\.[A-Za-z_][\w-]*(\[\])?)*$/, 'must be a dotted field path (a.b, items[].id)');

const common = {
  resource: z.string(),
  field: fieldPath,
  /** One sentence the derived document puts on the field and the migration guide shows. */
  description: z.string().min(1).optional(),
};

const jsonValue: z.ZodType<unknown> = z.json();

export const versionChange = z.discriminatedUnion(
  'op',
  [
    z.strictObject({ ...common, op: z.literal('rename'), to: fieldPath }),
    z.strictObject({ ...common, op: z.literal('scale'), to: fieldPath.optional(), factor: z.number().positive() }),
    z.strictObject({ ...common, op: z.literal('add'), default: jsonValue.optional() }),
    z.strictObject({ ...common, op: z.literal('remove'), value: jsonValue.optional() }),
    z.strictObject({
      ...common,
      op: z.literal('map'),
      values: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    }),
  ],
  { error: 'must be one of the operations rename, scale, add, remove, map' },
);

export type VersionChange = z.output<typeof versionChange>;
export type ChangeOperation = VersionChange['op'];
