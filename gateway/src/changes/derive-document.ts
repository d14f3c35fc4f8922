import { inForwardOrder, mappedBack, scaledBack, stepBackward } from '../translation/engine.js';
import type { VersionChange } from '../versions/changes.js';
import { fieldSegments, leafName, successorField, type FieldSegment } from '../translation/field-path.js';

/**
 * The OpenAPI document of a version declared as changes, derived from its successor's document: what the
 * gateway serves at `/v{n}/openapi.json` of a translated version, and what the contract gate proves the
 * committed `openapi/v{n}.json` against (docs/client-documents.md#openapi-documents). Pure: the same inputs give
 * the same document, and the inputs are never changed.
 */

/** One step down a chain: the document of `successor` becomes the document of `version` by `changes`. */
export interface DerivationStep {
  readonly version: number;
  readonly successor: number;
  readonly changes: readonly VersionChange[];
}

/** What the chain needs of a policy's version entry. */
interface ChainEntry {
  readonly version: number;
  readonly successor?: number | undefined;
  readonly changes?: readonly VersionChange[] | undefined;
}

/**
 * Where a translated version's document comes from: the version whose document the backend serves, and the steps down.
 */
export interface TranslationChain {
  readonly served: number;
  /** Newest first: v3 → v2, then v2 → v1. Empty for a version the backend serves itself. */
  readonly steps: readonly DerivationStep[];
}

/** Follows `successor` from `version` while a version has `changes`, to the first one that has none. */
export function translationChain(versions: readonly ChainEntry[], version: number): TranslationChain {
  const steps: DerivationStep[] = [];
  let entry = versions.find((listed) => listed.version === version);
  let served = version;
  // The length bound only guards against a successor cycle the policy file would have refused.
  while (entry?.changes !== undefined && entry.successor !== undefined && steps.length < versions.length) {
    steps.unshift({ version: entry.version, successor: entry.successor, changes: entry.changes });
    served = entry.successor;
    const next = served;
    entry = versions.find((listed) => listed.version === next);
  }
  return { served, steps };
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** Keys whose values are data a client sends or gets, never prose: their text is not reworded. */
const DATA_KEYS: ReadonlySet<string> = new Set(['example', 'examples', 'default', 'const', 'enum']);
/** Numeric keywords a scaled field's bounds are given in. */
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'] as const;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `/orders/:id` → a pattern of the document's `/v{n}/orders/{id}` and `/api/v{n}/orders/{id}`. */
export function resourcePattern(resource: string, version: number): RegExp {
  const rest = resource
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '\\{[^}/]+\\}' : escape(segment)))
    .join('/');
  return new RegExp(`^(?:/api)?/v${version}${rest}$`);
}

/**
 * The prose of the successor's document as this version's: `version 2` → `version 1`,
 * `/v2/` → `/v1/`, `OrderV2` → `OrderV1`.
 */
function reworded(text: string, successor: number, version: number): string {
  return text
    .replace(new RegExp(`\\bversion ${successor}\\b`, 'g'), `version ${version}`)
    .replace(new RegExp(`(^|[^\\w])((?:/api)?)/v${successor}(?=/|\\b)`, 'g'), `$1$2/v${version}`)
    .replace(new RegExp(`(?<=[a-z])V${successor}\\b`, 'g'), `V${version}`);
}

/** Every description, summary, title and operationId below `node` reworded; data (examples, enums) left alone. */
function rewordAll(node: unknown, successor: number, version: number): unknown {
  if (Array.isArray(node)) return node.map((item) => rewordAll(item, successor, version));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (
      typeof value === 'string' &&
      (key === 'description' || key === 'summary' || key === 'title' || key === 'operationId')
    ) {
      out[key] = reworded(value, successor, version);
    } else {
      out[key] = DATA_KEYS.has(key) ? value : rewordAll(value, successor, version);
    }
  }
  return out;
}

/** The schema and the branches of its `allOf`/`anyOf`/`oneOf`, where a property may be declared. */
function branches(schema: unknown): Json[] {
  if (!isObject(schema)) return [];
  const nested = ['allOf', 'anyOf', 'oneOf'].flatMap((key) =>
    Array.isArray(schema[key]) ? (schema[key] as unknown[]).flatMap(branches) : [],
  );
  return [schema, ...nested];
}

/**
 * Calls `visit` with every object schema below `schema` that declares the path's last property (through
 * `items` for `[]`, and through composition). Schemas are changed in place: the caller works on a copy.
 */
function eachDeclaring(
  schema: unknown,
  segments: readonly FieldSegment[],
  visit: (parent: Json, leaf: FieldSegment) => void,
): void {
  const [first, ...rest] = segments;
  if (first === undefined) return;
  for (const branch of branches(schema)) {
    const properties = branch.properties;
    if (!isObject(properties) || !(first.name in properties)) continue;
    if (rest.length === 0) {
      visit(branch, first);
      continue;
    }
    const child = properties[first.name];
    if (!first.array) eachDeclaring(child, rest, visit);
    else for (const items of branches(child)) eachDeclaring(items.items, rest, visit);
  }
}

const propertiesOf = (parent: Json): Json => parent.properties as Json;
const requiredOf = (parent: Json): string[] => (Array.isArray(parent.required) ? (parent.required as string[]) : []);

/** Renames a property in its place (key order and `required` kept), with the property's new schema. */
function renameProperty(parent: Json, from: string, to: string, schema: unknown): void {
  parent.properties = Object.fromEntries(
    Object.entries(propertiesOf(parent)).map(([key, value]) => (key === from ? [to, schema] : [key, value])),
  );
  if (Array.isArray(parent.required)) parent.required = requiredOf(parent).map((name) => (name === from ? to : name));
}

function deleteProperty(parent: Json, name: string): void {
  parent.properties = Object.fromEntries(Object.entries(propertiesOf(parent)).filter(([key]) => key !== name));
  if (!Array.isArray(parent.required)) return;
  const required = requiredOf(parent).filter((listed) => listed !== name);
  if (required.length === 0) delete parent.required;
  else parent.required = required;
}

function withDescription(schema: Json, change: VersionChange): Json {
  return change.description === undefined ? schema : { ...schema, description: change.description };
}

/** The JSON Schema type of a value a `remove` puts back. */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** A successor's integer field as this version's decimal: `number`, its bounds and data divided by the factor. */
function unscaledSchema(schema: Json, factor: number): Json {
  const unscale = scaledBack(factor);
  const out: Json = { ...schema };
  if (out.type === 'integer') out.type = 'number';
  else if (Array.isArray(out.type))
    out.type = (out.type as unknown[]).map((type) => (type === 'integer' ? 'number' : type));
  for (const bound of BOUNDS) {
    const value = out[bound];
    if (typeof value !== 'number') continue;
    // ±2^53-1 says "an integer JSON keeps exact", not a rule of the field: a decimal has no such bound.
    if (Math.abs(value) === Number.MAX_SAFE_INTEGER || bound === 'multipleOf') delete out[bound];
    else out[bound] = unscale(value);
  }
  if ('default' in out) out.default = unscale(out.default);
  if ('const' in out) out.const = unscale(out.const);
  if (Array.isArray(out.enum)) out.enum = (out.enum as unknown[]).map(unscale);
  if (Array.isArray(out.examples)) out.examples = (out.examples as unknown[]).map(unscale);
  return out;
}

function unmappedSchema(schema: Json, back: (value: unknown) => unknown): Json {
  const out: Json = { ...schema };
  for (const key of ['default', 'const'] as const) if (key in out) out[key] = back(out[key]);
  for (const key of ['enum', 'examples'] as const)
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(back);
  return out;
}

/** The changes of one step on one resource, the successor they lead to, and their translation of a body. */
interface Changes {
  readonly changes: readonly VersionChange[];
  readonly successor: number;
  /** The translation engine's backward step: examples read back as the gateway reads answers back. */
  readonly backward: (body: unknown) => unknown;
}

/** Whether a schema is a response's (this version's client reads it) or a request body's (it sends it). */
type Direction = 'response' | 'request';

/** One change read backwards on a body schema (a copy, changed in place). */
function schemaBackward(schema: unknown, change: VersionChange, direction: Direction, successor: number): void {
  const segments = fieldSegments(successorField(change));
  const leaf = leafName(change.field);
  eachDeclaring(schema, segments, (parent, { name, array }) => {
    const property = propertiesOf(parent)[name];
    if (!isObject(property)) return;
    switch (change.op) {
      case 'rename':
        renameProperty(
          parent,
          name,
          leaf,
          change.description === undefined ? withoutDescription(property) : withDescription(property, change),
        );
        return;
      case 'scale': {
        const scaled = onLeaf(property, array, (value) => unscaledSchema(value, change.factor));
        const described = change.description ?? `Version ${successor}'s \`${name}\` divided by ${change.factor}.`;
        renameProperty(parent, name, leaf, { ...scaled, description: described });
        return;
      }
      case 'add':
        // A request body that lacks the field gets its default on the way: this version's clients need not send it.
        if (direction === 'response' || change.default !== undefined) deleteProperty(parent, name);
        return;
      case 'map': {
        const back = mappedBack(change.values);
        propertiesOf(parent)[name] = withDescription(
          onLeaf(property, array, (value) => unmappedSchema(value, back)),
          change,
        );
        return;
      }
      case 'remove':
        // Declared on a field the successor no longer has: handled by putBack below.
        return;
    }
  });
}

/** A field's schema, or the schema of its items for a `[]` field. */
function onLeaf(schema: Json, array: boolean, transform: (schema: Json) => Json): Json {
  return array && isObject(schema.items) ? { ...schema, items: transform(schema.items) } : transform(schema);
}

/** A renamed field without a declared description drops the successor's: it speaks of the successor's field. */
function withoutDescription(schema: Json): Json {
  const rest = { ...schema };
  delete rest.description;
  return rest;
}

/**
 * A `remove` read backwards: the field is back in this version's responses, always, with the `value` the
 * gateway fills in (null when the change gives none); a request body may carry it (the gateway drops it).
 */
function putBack(schema: unknown, change: Extract<VersionChange, { op: 'remove' }>, direction: Direction): void {
  const segments = fieldSegments(change.field);
  const leaf = segments.at(-1) as FieldSegment;
  const parents = segments.length === 1 ? branches(schema).slice(0, 1) : collectParents(schema, segments);
  const value = direction === 'response' ? (change.value ?? null) : change.value;
  const property = withDescription(value === undefined ? {} : { type: typeOf(value) }, change);
  for (const parent of parents) {
    if (!isObject(parent.properties)) continue;
    parent.properties = { ...parent.properties, [leaf.name]: property };
    if (direction === 'response')
      parent.required = [...requiredOf(parent).filter((name) => name !== leaf.name), leaf.name];
  }
}

/** The object schemas that hold the path's last segment: those declaring the segment before it, one level down. */
function collectParents(schema: unknown, segments: readonly FieldSegment[]): Json[] {
  const parents: Json[] = [];
  eachDeclaring(schema, segments.slice(0, -1), (grandparent, { name, array }) => {
    const holder = propertiesOf(grandparent)[name];
    const objects = array ? branches(holder).flatMap((items) => branches(items.items)) : branches(holder);
    const first = objects.find((candidate) => isObject(candidate.properties));
    if (first !== undefined) parents.push(first);
  });
  return parents;
}

const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json\b/;

/** A media type object's schema and examples, as this version's, for one step. */
function mediaBackward(media: Json, { changes, successor, backward }: Changes, direction: Direction): Json {
  const out: Json = structuredClone(media);
  // As the engine reads a body back: parents renamed back before their fields are looked up by this version's names.
  for (const change of inForwardOrder(changes).reverse()) {
    if (change.op === 'remove') putBack(out.schema, change, direction);
    else schemaBackward(out.schema, change, direction, successor);
  }
  // The engine shares what it leaves unchanged and the declared values it puts in: each example gets its own copy.
  const translated = (example: unknown): unknown => structuredClone(backward(example));
  if ('example' in out) out.example = translated(out.example);
  if (isObject(out.examples)) {
    out.examples = Object.fromEntries(
      Object.entries(out.examples).map(([name, example]) => [
        name,
        isObject(example) && 'value' in example ? { ...example, value: translated(example.value) } : example,
      ]),
    );
  }
  if (isObject(out.schema) && Array.isArray(out.schema.examples)) {
    out.schema.examples = (out.schema.examples as unknown[]).map(translated);
  }
  return out;
}

function contentBackward(content: unknown, changes: Changes, direction: Direction): unknown {
  if (!isObject(content)) return content;
  return Object.fromEntries(
    Object.entries(content).map(([type, media]) => [
      type,
      JSON_MEDIA.test(type) && isObject(media) ? mediaBackward(media, changes, direction) : media,
    ]),
  );
}

/** An operation of a changed resource: its JSON request body and 2xx JSON responses, as the gateway translates them. */
function operationBackward(operation: Json, changes: Changes): Json {
  const out: Json = { ...operation };
  if (isObject(out.requestBody))
    out.requestBody = { ...out.requestBody, content: contentBackward(out.requestBody.content, changes, 'request') };
  if (isObject(out.responses)) {
    out.responses = Object.fromEntries(
      Object.entries(out.responses).map(([status, response]) =>
        /^2(?:\d\d|XX)$/.test(status) && isObject(response)
          ? [status, { ...response, content: contentBackward(response.content, changes, 'response') }]
          : [status, response],
      ),
    );
  }
  return out;
}

/** One step: the successor's document as this version's. */
function deriveStep(document: Json, { version, successor, changes }: DerivationStep): Json {
  const reworded = rewordAll(document, successor, version) as Json;
  const ownPath = new RegExp(`^(/api)?/v${successor}(?=/|$)`);
  const byResource = new Map<string, VersionChange[]>();
  for (const change of changes) byResource.set(change.resource, [...(byResource.get(change.resource) ?? []), change]);
  const patterns = [...byResource].map(([resource, resourceChanges]) => ({
    pattern: resourcePattern(resource, successor),
    changes: resourceChanges,
  }));

  const paths: Json = {};
  for (const [path, item] of Object.entries(isObject(reworded.paths) ? reworded.paths : {})) {
    const matched = patterns.filter(({ pattern }) => pattern.test(path)).flatMap((entry) => entry.changes);
    let derived = item;
    if (matched.length > 0 && isObject(item)) {
      const operations: Json = { ...item };
      const changes: Changes = { changes: matched, successor, backward: stepBackward(matched) };
      for (const method of METHODS)
        if (isObject(item[method])) operations[method] = operationBackward(item[method], changes);
      derived = operations;
    }
    paths[path.replace(ownPath, `$1/v${version}`)] = derived;
  }
  const info = isObject(reworded.info) ? { ...reworded.info, version: String(version) } : reworded.info;
  return { ...reworded, info, paths };
}

/** The document of the chain's last step's version, from the document of the version the backend serves. */
export function deriveDocument(served: object, steps: readonly DerivationStep[]): object {
  return steps.reduce<Json>((document, step) => deriveStep(document, step), served as Json);
}

/**
 * What the contract gate needs of a policy's versions (services/users-orders/tools/openapi-snapshots.ts):
 * which are declared as changes, and each one's document from the document of the version its chain ends at.
 */
export function translatedVersions(versions: readonly ChainEntry[]): {
  versions: number[];
  derive(
    version: number,
    documentOf: (version: number) => object | undefined,
  ): { from: number; document: object | undefined };
} {
  return {
    versions: versions.filter((entry) => entry.changes !== undefined).map((entry) => entry.version),
    derive(version, documentOf) {
      const { served, steps } = translationChain(versions, version);
      const newest = documentOf(served);
      return { from: served, document: newest === undefined ? undefined : deriveDocument(newest, steps) };
    },
  };
}
