import { z } from 'zod';

/**
 * A version's `changes`: what changed between it and its successor, one entry per change, on one resource
 * template (docs/behaviour.md "Versions declared as changes"). A closed set of operations: the first edition's
 * field edits (rename, scale, add, remove, map), and what else real APIs change (move, envelope, status, header,
 * path, link) with `module` as the escape hatch. A `field` is a dotted path with `[]` for the items of an array
 * (`items[].user_id`), as this version names it.
 */
const fieldPath = z
  .string()
  .regex(/^[A-Za-z_][\w-]*(\[\])?(\.[A-Za-z_][\w-]*(\[\])?)*$/, 'must be a dotted field path (a.b, items[].id)');

/** An envelope's key: a dotted path of names, no array items. */
const objectPath = z
  .string()
  .regex(/^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$/, 'must be a dotted path of field names (data, result.items)');

/** RFC 9110 token characters. */
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a header name (RFC 9110 token)');

const status = z.int('must be an HTTP status (100–599)').min(100, 'must be 100–599').max(599, 'must be 100–599');

/** Which answers a body change applies to: 2xx bodies (and request bodies), or error envelopes (4xx and 5xx). */
export const BODY_KINDS = ['success', 'error'] as const;
export type BodyKind = (typeof BODY_KINDS)[number];

const common = {
  resource: z.string(),
  /** One sentence the derived document puts on the field and the migration guide shows. */
  description: z.string().min(1).optional(),
};
/** Body changes: `on` says which bodies; a request body is a success's. */
const onBodies = { on: z.enum(BODY_KINDS, { error: 'must be "success" or "error"' }).optional() };

const jsonValue: z.ZodType<unknown> = z.json();

/** The operations, in the order the documentation lists them. */
const CHANGE_OPERATIONS = [
  'rename',
  'scale',
  'add',
  'remove',
  'map',
  'move',
  'envelope',
  'status',
  'header',
  'path',
  'link',
  'module',
] as const;

export const versionChange = z.discriminatedUnion(
  'op',
  [
    z.strictObject({ ...common, ...onBodies, op: z.literal('rename'), field: fieldPath, to: fieldPath }),
    z.strictObject({
      ...common,
      ...onBodies,
      op: z.literal('scale'),
      field: fieldPath,
      to: fieldPath.optional(),
      factor: z.number().positive(),
    }),
    z.strictObject({ ...common, ...onBodies, op: z.literal('add'), field: fieldPath, default: jsonValue.optional() }),
    z.strictObject({ ...common, ...onBodies, op: z.literal('remove'), field: fieldPath, value: jsonValue.optional() }),
    z.strictObject({
      ...common,
      ...onBodies,
      op: z.literal('map'),
      field: fieldPath,
      values: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    }),
    z.strictObject({ ...common, ...onBodies, op: z.literal('move'), field: fieldPath, to: fieldPath }),
    z.strictObject({ ...common, ...onBodies, op: z.literal('envelope'), field: objectPath }),
    z.strictObject({ ...common, op: z.literal('status'), from: status, to: status }),
    z.strictObject({ ...common, op: z.literal('header'), name: headerName, to: headerName }),
    z.strictObject({ ...common, op: z.literal('path'), to: z.string() }),
    z.strictObject({ ...common, ...onBodies, op: z.literal('link'), field: fieldPath }),
    z.strictObject({
      ...common,
      ...onBodies,
      op: z.literal('module'),
      module: z.string().regex(/^[^\0]+\.m?js$/, 'must be the path of an ES module file (.mjs or .js)'),
    }),
  ],
  { error: `must be one of the operations ${CHANGE_OPERATIONS.join(', ')}` },
);

export type VersionChange = z.output<typeof versionChange>;
export type ChangeOperation = VersionChange['op'];
/** The changes that name a field of a body (every body change but envelope and module). */
export type FieldChange = Extract<VersionChange, { field: string }>;

/** `"field": "Link"` of a link change names the Link header, not a body field. */
export const LINK_HEADER_FIELD = 'Link';

/** Which bodies a change applies to; undefined for a change of no body (status, header, path, the Link header). */
export function bodyKindOf(change: VersionChange): BodyKind | undefined {
  switch (change.op) {
    case 'status':
    case 'header':
    case 'path':
      return undefined;
    case 'link':
      return change.field === LINK_HEADER_FIELD ? undefined : (change.on ?? 'success');
    default:
      return change.on ?? 'success';
  }
}

/** The body field a change names, in this version's names; undefined for a change of no single field. */
export function fieldOf(change: VersionChange): string | undefined {
  switch (change.op) {
    case 'envelope':
    case 'module':
    case 'status':
    case 'header':
    case 'path':
      return undefined;
    case 'link':
      return change.field === LINK_HEADER_FIELD ? undefined : change.field;
    default:
      return change.field;
  }
}

/** Where the field a change names is in the successor (`to` of a rename, scale or move; else the field itself). */
export function successorFieldOf(change: VersionChange): string | undefined {
  switch (change.op) {
    case 'rename':
    case 'move':
      return change.to;
    case 'scale':
      return change.to ?? change.field;
    default:
      return fieldOf(change);
  }
}

/**
 * The change in a few words, as a trace names it (`rename user_id → customer_id`, `status 403 → 401`): what the
 * gateway does on the way back, in the order the policy declares it.
 */
export function shortDescription(change: VersionChange): string {
  const on = 'on' in change && change.on === 'error' ? ' (errors)' : '';
  switch (change.op) {
    case 'rename':
    case 'move':
      return `${change.op} ${change.field} → ${change.to}${on}`;
    case 'scale':
      return `scale ${change.field}${change.to === undefined ? '' : ` → ${change.to}`} ×${change.factor}${on}`;
    case 'status':
      return `status ${change.to} → ${change.from}`;
    case 'header':
      return `header ${change.to} → ${change.name}`;
    case 'path':
      return `path ${change.resource} → ${change.to}`;
    case 'module':
      return `module ${change.module}${on}`;
    default:
      return `${change.op} ${change.field}${on}`;
  }
}
