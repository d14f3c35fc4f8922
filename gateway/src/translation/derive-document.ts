import { isObject, type BodyStep } from './body-plan.js';
import {
  bodyKindOf,
  fieldOf,
  LINK_HEADER_FIELD,
  type BodyKind,
  type FieldChange,
  type VersionChange,
} from './changes.js';
import type { CompiledStep, CompiledTranslations, StepResource } from './compile.js';
import { fieldSegments, leafName, type FieldSegment } from './field-path.js';
import { roundTripProblem, type TranslationLimits } from './module-step.js';
import { defaultTranslationLimits } from './compile.js';
import { mappedBack, scaledBack } from './values.js';

/**
 * The OpenAPI document of a version declared as changes, derived from its successor's by the same compiled steps
 * the gateway translates bodies with (compile.ts): what the gateway serves at `/v{n}/openapi.json` of a translated
 * version, and what the contract gate proves the committed `openapi/v{n}.json` against
 * (docs/client-documents.md#openapi-documents). Pure: the same inputs give the same document, and the inputs are never
 * changed.
 */

type Json = Record<string, unknown>;
/** The HTTP methods an OpenAPI path item names operations by. */
export const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** Keys whose values are data a client sends or gets, never prose: their text is not reworded. */
const DATA_KEYS: ReadonlySet<string> = new Set(['example', 'examples', 'default', 'const', 'enum', 'pattern']);
/** Numeric keywords a scaled field's bounds are given in. */
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'] as const;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The segments of a resource template as a pattern of a document's path (`:id` → `{…}`). */
const templatePattern = (resource: string): string =>
  resource
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '\\{[^}/]+\\}' : escape(segment)))
    .join('/');

/** `/orders/:id` → a pattern of the document's `/v{n}/orders/{id}` and `/api/v{n}/orders/{id}`. */
export function resourcePattern(resource: string, version: number): RegExp {
  return new RegExp(`^(?:/api)?/v${version}${templatePattern(resource)}$`);
}

/**
 * A document's path below its version (`/purchases/{orderId}`) of template `from` (`/purchases/:id`) at template `to`
 * (`/orders/:id`): each parameter keeps the document's own spelling, found by the template's parameter name.
 */
export function renamedDocumentPath(rest: string, from: string, to: string): string {
  const parts = rest.split('/');
  const names = new Map<string, string>();
  from.split('/').forEach((segment, i) => {
    if (segment.startsWith(':')) names.set(segment.slice(1), parts[i] ?? `{${segment.slice(1)}}`);
  });
  return to
    .split('/')
    .map((segment) => (segment.startsWith(':') ? (names.get(segment.slice(1)) ?? `{${segment.slice(1)}}`) : segment))
    .join('/');
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

/** Whether some object schema below `schema` declares the field at `path`. */
function declares(schema: unknown, path: string): boolean {
  let found = false;
  eachDeclaring(schema, fieldSegments(path), () => (found = true));
  return found;
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

/** A link field's `pattern` naming the successor's paths (`/v2/`) names this version's. */
function relinkedSchema(schema: Json, successor: number, version: number): Json {
  if (typeof schema.pattern !== 'string') return schema;
  return { ...schema, pattern: schema.pattern.replace(new RegExp(`/v${successor}(?![0-9])`, 'g'), `/v${version}`) };
}

/** Whether a schema is a response's (this version's client reads it) or a request body's (it sends it). */
type Direction = 'response' | 'request';

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

/** The object schemas at `segments` below `schema` (the root's own for none), through `items` and composition. */
function objectsAt(schema: unknown, segments: readonly FieldSegment[]): Json[] {
  if (segments.length === 0)
    return branches(schema)
      .filter((branch) => isObject(branch.properties))
      .slice(0, 1);
  const objects: Json[] = [];
  eachDeclaring(schema, segments, (parent, { name, array }) => {
    const holder = propertiesOf(parent)[name];
    const candidates = array ? branches(holder).flatMap((items) => branches(items.items)) : branches(holder);
    const first = candidates.find((candidate) => isObject(candidate.properties));
    if (first !== undefined) objects.push(first);
  });
  return objects;
}

/**
 * The property at `names` below `object` taken out, with whether it was required; each parent on the way that is
 * left without properties taken out too, as the engine drops a parent it leaves empty.
 */
function takeProperty(object: Json, names: readonly string[]): { schema: unknown; required: boolean } | undefined {
  const [first, ...rest] = names as [string, ...string[]];
  if (!isObject(object.properties) || !(first in object.properties)) return undefined;
  if (rest.length === 0) {
    const taken = { schema: object.properties[first], required: requiredOf(object).includes(first) };
    deleteProperty(object, first);
    return taken;
  }
  const child = branches(object.properties[first]).find((branch) => isObject(branch.properties));
  if (child === undefined) return undefined;
  const taken = takeProperty(child, rest);
  if (taken === undefined) return undefined;
  if (Object.keys(propertiesOf(child)).length === 0) deleteProperty(object, first);
  else if (requiredOf(child).length === 0 && requiredOf(object).includes(first)) {
    // Nothing it still holds is required: left empty, it is dropped, so it is there only sometimes.
    const required = requiredOf(object).filter((name) => name !== first);
    if (required.length === 0) delete object.required;
    else object.required = required;
  }
  return taken;
}

/** A property put at `names` below `object`, the object schemas it lacks created on the way. */
function putProperty(object: Json, names: readonly string[], schema: unknown, required: boolean): void {
  const [first, ...rest] = names as [string, ...string[]];
  const properties = isObject(object.properties) ? object.properties : {};
  if (rest.length === 0) {
    object.properties = { ...properties, [first]: schema };
  } else {
    let child = branches(properties[first]).find((branch) => isObject(branch.properties));
    if (child === undefined) {
      child = { type: 'object', properties: {} };
      object.properties = { ...properties, [first]: child };
    }
    putProperty(child, rest, schema, required);
  }
  if (required && !requiredOf(object).includes(first)) object.required = [...requiredOf(object), first];
}

/**
 * A move read backwards: the property where the successor has it (`customer.id`) taken out, the parents it leaves
 * empty with it, and put where this version has it (`customer_id`).
 */
function moveBack(schema: unknown, change: Extract<VersionChange, { op: 'move' }>): void {
  const from = fieldSegments(change.field);
  const into = fieldSegments(change.to);
  let common = 0;
  while (
    common < from.length - 1 &&
    common < into.length - 1 &&
    from[common]?.name === into[common]?.name &&
    from[common]?.array === into[common]?.array
  )
    common++;
  const names = (segments: FieldSegment[]) => segments.slice(common).map(({ name }) => name);
  const [left] = names(into) as [string];
  const [arrived] = names(from) as [string];
  for (const object of objectsAt(schema, from.slice(0, common))) {
    const properties = Object.keys(propertiesOf(object));
    const required = requiredOf(object);
    const taken = takeProperty(object, names(into));
    if (taken === undefined) continue;
    const property = isObject(taken.schema) ? withDescription(taken.schema, change) : taken.schema;
    const freed = !(left in propertiesOf(object)) && !properties.includes(arrived);
    putProperty(object, names(from), property, taken.required);
    // As the engine puts a field back: in the place of the one it leaves, when that place was freed.
    if (!freed) continue;
    const order = (before: string[], after: string[]) => {
      const placed = before.flatMap((name) => (name === left ? [arrived] : after.includes(name) ? [name] : []));
      return [...placed, ...after.filter((name) => !placed.includes(name))];
    };
    const keys = order(properties, Object.keys(propertiesOf(object)));
    object.properties = Object.fromEntries(keys.map((key) => [key, propertiesOf(object)[key]]));
    if (Array.isArray(object.required)) object.required = order(required, requiredOf(object));
  }
}

/**
 * A `remove` read backwards: the field is back in this version's responses, always, with the `value` the
 * gateway fills in (null when the change gives none); a request body may carry it (the gateway drops it).
 */
function putBack(schema: unknown, change: Extract<VersionChange, { op: 'remove' }>, direction: Direction): void {
  const segments = fieldSegments(change.field);
  const leaf = segments.at(-1) as FieldSegment;
  const value = direction === 'response' ? (change.value ?? null) : change.value;
  const property = withDescription(value === undefined ? {} : { type: typeOf(value) }, change);
  for (const parent of objectsAt(schema, segments.slice(0, -1))) {
    parent.properties = { ...propertiesOf(parent), [leaf.name]: property };
    if (direction === 'response')
      parent.required = [...requiredOf(parent).filter((name) => name !== leaf.name), leaf.name];
  }
}

/** One field change read backwards on a body schema (a copy, changed in place). */
function fieldBackward(schema: unknown, change: FieldChange, direction: Direction, step: CompiledStep): void {
  if (change.op === 'remove') {
    putBack(schema, change, direction);
    return;
  }
  if (change.op === 'move') {
    moveBack(schema, change);
    return;
  }
  const successorPath =
    change.op === 'rename' ? change.to : change.op === 'scale' ? (change.to ?? change.field) : change.field;
  const leaf = leafName(change.field);
  eachDeclaring(schema, fieldSegments(successorPath), (parent, { name, array }) => {
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
        const described = change.description ?? `Version ${step.successor}'s \`${name}\` divided by ${change.factor}.`;
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
      case 'link':
        propertiesOf(parent)[name] = withDescription(
          onLeaf(property, array, (value) => relinkedSchema(value, step.successor, step.version)),
          change,
        );
        return;
    }
  });
}

/** How deep a change's field lies (`items[].id`: 2). */
const depthOf = (change: FieldChange): number => change.field.split('.').length;

/**
 * One version's field changes in the order they apply to schemas forward (this version → successor), whatever
 * order they were declared in: fields are named as this version names them, so the deepest fields change first,
 * before their parents are renamed, and a map (or a link) before the rename of its field. Backward is the other
 * way round. Bodies need no order: a plan applies a step's changes at once.
 */
function inForwardOrder<Change extends FieldChange>(changes: readonly Change[]): Change[] {
  const rank = (change: FieldChange): number =>
    depthOf(change) * 2 + (change.op === 'map' || change.op === 'link' ? 1 : 0);
  return [...changes].sort((a, b) => rank(b) - rank(a));
}

/** An envelope read backwards on a schema: what the successor holds under the envelope's key; else the schema. */
function unwrapped(schema: unknown, path: readonly string[]): unknown {
  let inner = schema;
  for (const name of path) {
    const holder = branches(inner).find((branch) => isObject(branch.properties) && name in branch.properties);
    if (holder === undefined) return schema;
    inner = propertiesOf(holder)[name];
  }
  return inner;
}

/** What one step does to one resource's bodies of one kind, for its documents. */
interface BodyDerivation {
  readonly step: CompiledStep;
  readonly changes: readonly VersionChange[];
  readonly body: BodyStep;
}

/** A body schema (a copy) read backwards through one step: unwrapped, the modules, then the fields. */
function schemaBackward(schema: unknown, derivation: BodyDerivation, direction: Direction): unknown {
  let out = schema;
  const fields: FieldChange[] = [];
  const modules: string[] = [];
  for (const change of derivation.changes) {
    if (change.op === 'envelope') out = unwrapped(out, change.field.split('.'));
    else if (change.op === 'module') modules.push(change.module);
    else if (fieldOf(change) !== undefined) fields.push(change as FieldChange);
  }
  for (const path of modules.reverse()) {
    const transform = derivation.step.modules.get(path)?.schema;
    if (transform !== undefined) out = structuredClone(transform(structuredClone(out)));
  }
  // As the engine reads a body back: parents renamed back before their fields are looked up by this version's names.
  for (const change of inForwardOrder(fields).reverse()) fieldBackward(out, change, direction, derivation.step);
  return out;
}

const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json\b/;

/** A media type object's schema and examples, as this version's, for one step. */
function mediaBackward(media: Json, derivation: BodyDerivation, direction: Direction, status?: StatusCode): Json {
  const out: Json = structuredClone(media);
  if ('schema' in out) out.schema = schemaBackward(out.schema, derivation, direction);
  // The engine shares what it leaves unchanged and the declared values it puts in: each example gets its own copy.
  const translated = (example: unknown): unknown => {
    let back: unknown;
    try {
      back = derivation.body.backward(example);
    } catch {
      // An example the gateway would refuse to translate stays as the successor shows it.
      back = example;
    }
    return structuredClone(status === undefined ? back : withCode(back, status));
  };
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
  if (status !== undefined && isObject(out.schema)) out.schema = withCodeSchema(out.schema, status);
  return out;
}

/** A status a `status` change gives this version (the error envelope's `code` follows it). */
interface StatusCode {
  readonly from: number;
  readonly to: number;
}

function withCode(body: unknown, { from, to }: StatusCode): unknown {
  return isObject(body) && body.code === from ? { ...body, code: to } : body;
}

function withCodeSchema(schema: Json, { from, to }: StatusCode): Json {
  const properties = schema.properties;
  if (!isObject(properties) || !isObject(properties.code)) return schema;
  const code = properties.code;
  const swapped: Json = { ...code };
  if (Array.isArray(code.enum)) swapped.enum = (code.enum as unknown[]).map((value) => (value === from ? to : value));
  if (code.const === from) swapped.const = to;
  return { ...schema, properties: { ...properties, code: swapped } };
}

function contentBackward(
  content: unknown,
  derivation: BodyDerivation,
  direction: Direction,
  status?: StatusCode,
): unknown {
  if (!isObject(content)) return content;
  return Object.fromEntries(
    Object.entries(content).map(([type, media]) => [
      type,
      JSON_MEDIA.test(type) && isObject(media) ? mediaBackward(media, derivation, direction, status) : media,
    ]),
  );
}

/** The kind of bodies a response of this status has: 2xx (`2XX`) success, 4xx/5xx (`4XX`, `default`) errors. */
function kindOfResponse(status: string): BodyKind | undefined {
  if (/^2(?:\d\d|XX)$/.test(status)) return 'success';
  if (/^[45](?:\d\d|XX)$/.test(status) || status === 'default') return 'error';
  return undefined;
}

/** Response headers named by the successor as this version names them (header names compare without case). */
function renamedHeaders(headers: unknown, renames: StepResource['headers']): unknown {
  if (!isObject(headers) || renames.length === 0) return headers;
  return Object.fromEntries(
    Object.entries(headers).map(([name, header]) => [
      renames.find(({ successor }) => successor === name.toLowerCase())?.own ?? name,
      header,
    ]),
  );
}

/** An operation of one resource, as this version's: its bodies, statuses and headers. */
function operationBackward(operation: Json, resource: StepResource, step: CompiledStep): Json {
  const out: Json = { ...operation };
  const derivation = (kind: BodyKind): BodyDerivation => ({
    step,
    changes: resource.changes.filter((change) => bodyKindOf(change) === kind),
    body: resource.bodies[kind],
  });
  if (Array.isArray(out.parameters) && resource.headers.length > 0) {
    out.parameters = (out.parameters as unknown[]).map((parameter) => {
      if (!isObject(parameter) || parameter.in !== 'header' || typeof parameter.name !== 'string') return parameter;
      const rename = resource.headers.find(({ successor }) => successor === (parameter.name as string).toLowerCase());
      return rename === undefined ? parameter : { ...parameter, name: rename.own };
    });
  }
  if (isObject(out.requestBody))
    out.requestBody = {
      ...out.requestBody,
      content: contentBackward(out.requestBody.content, derivation('success'), 'request'),
    };
  if (isObject(out.responses)) {
    const responses: [string, unknown][] = [];
    for (const [status, response] of Object.entries(out.responses)) {
      const kind = kindOfResponse(status);
      const mapped = resource.statuses.get(Number(status));
      if (!isObject(response) || '$ref' in response) {
        responses.push([mapped === undefined ? status : String(mapped), response]);
        continue;
      }
      const code = mapped === undefined ? undefined : { from: Number(status), to: mapped };
      const translated: Json = { ...response };
      if (kind !== undefined)
        translated.content = contentBackward(response.content, derivation(kind), 'response', code);
      if ('headers' in response) translated.headers = renamedHeaders(response.headers, resource.headers);
      responses.push([mapped === undefined ? status : String(mapped), translated]);
    }
    // A status this version answers for two of the successor's: the successor's own answer of it is described.
    const kept = new Map<string, unknown>();
    for (const [index, [status, response]] of responses.entries()) {
      const own = Object.keys(out.responses)[index] === status;
      if (!kept.has(status) || own) kept.set(status, response);
    }
    out.responses = Object.fromEntries(kept);
  }
  return out;
}

/** A document path of the successor's version (`/api/v2/purchases/{id}`): its `/api` and what is below the version. */
function versionedPath(path: string, version: number): { api: string; rest: string } | undefined {
  const match = new RegExp(`^(/api)?/v${version}(/.*)?$`).exec(path);
  return match === null ? undefined : { api: match[1] ?? '', rest: match[2] ?? '' };
}

/** Whether a document's path below its version (`/orders/{id}`) is one of `template` (`/orders/:id`). */
export const matchesTemplate = (rest: string, template: string): boolean =>
  new RegExp(`^${templatePattern(template)}$`).test(rest);

/** One step: the successor's document as this version's. */
function deriveStep(document: Json, step: CompiledStep): Json {
  const { version, successor } = step;
  const rewordedDocument = rewordAll(document, successor, version) as Json;
  const resources = [...step.resources.values()];
  const paths: Json = {};
  for (const [path, item] of Object.entries(isObject(rewordedDocument.paths) ? rewordedDocument.paths : {})) {
    const versioned = versionedPath(path, successor);
    if (versioned === undefined) {
      paths[path] = item;
      continue;
    }
    const { api, rest } = versioned;
    const resource = resources.find(({ successorTemplate }) => matchesTemplate(rest, successorTemplate));
    if (resource === undefined) {
      // A resource this version does not have is no path of its document.
      if (!step.unlisted.some((template) => matchesTemplate(rest, template))) paths[`${api}/v${version}${rest}`] = item;
      continue;
    }
    const own = renamedDocumentPath(rest, resource.successorTemplate, resource.template);
    let derived = item;
    if (isObject(item) && resource.changes.length > 0) {
      const operations: Json = { ...item };
      for (const method of OPERATION_METHODS)
        if (isObject(item[method])) operations[method] = operationBackward(item[method], resource, step);
      derived = operations;
    }
    paths[`${api}/v${version}${own}`] = derived;
  }
  const info = isObject(rewordedDocument.info)
    ? { ...rewordedDocument.info, version: String(version) }
    : rewordedDocument.info;
  return { ...rewordedDocument, info, paths };
}

/**
 * The document of the first step's version, from the document of the version the backend serves: `steps` oldest
 * first (CompiledTranslations.chain), applied newest first.
 */
export function deriveDocument(served: object, steps: readonly CompiledStep[]): object {
  return [...steps].reverse().reduce<Json>((document, step) => deriveStep(document, step), served as Json);
}

/** The JSON bodies of a document's operations of one resource and kind: schemas and examples. */
function bodiesOf(
  document: unknown,
  template: string,
  version: number,
  kind: BodyKind,
): { schemas: unknown[]; examples: unknown[] } {
  const schemas: unknown[] = [];
  const examples: unknown[] = [];
  const pattern = resourcePattern(template, version);
  const paths = isObject(document) && isObject(document.paths) ? document.paths : {};
  const collect = (content: unknown) => {
    if (!isObject(content)) return;
    for (const [type, media] of Object.entries(content)) {
      if (!JSON_MEDIA.test(type) || !isObject(media)) continue;
      if ('schema' in media) schemas.push(media.schema);
      if ('example' in media) examples.push(media.example);
      if (isObject(media.examples))
        for (const example of Object.values(media.examples))
          if (isObject(example) && 'value' in example) examples.push(example.value);
    }
  };
  for (const [path, item] of Object.entries(paths)) {
    if (!pattern.test(path) || !isObject(item)) continue;
    for (const method of OPERATION_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      if (kind === 'success' && isObject(operation.requestBody)) collect(operation.requestBody.content);
      for (const [status, response] of Object.entries(isObject(operation.responses) ? operation.responses : {})) {
        if (kindOfResponse(status) === kind && isObject(response)) collect(response.content);
      }
    }
  }
  return { schemas, examples };
}

/** The operations of a resource in a document: their responses and header parameters. */
function operationsOf(document: unknown, template: string, version: number): Json[] {
  const pattern = resourcePattern(template, version);
  const paths = isObject(document) && isObject(document.paths) ? document.paths : {};
  return Object.entries(paths)
    .filter(([path, item]) => pattern.test(path) && isObject(item))
    .flatMap(([, item]) => OPERATION_METHODS.map((method) => (item as Json)[method]).filter(isObject));
}

/**
 * What each of one step's declarations claims that the documents do not show (the contract gate's proof of the
 * declarations): a field none of the resource's bodies has, a status or header the successor never answers, a path
 * it does not serve, a module that does not give back the successor's examples. `successor` is the successor's
 * document, `derived` this version's as derived from it. Each problem names the change's JSON path in the policy.
 */
function declarationProblems(
  step: CompiledStep,
  successor: object,
  derived: object,
  limits: TranslationLimits = defaultTranslationLimits(),
): string[] {
  const problems: string[] = [];
  step.changes.forEach((change, index) => {
    const where = `version ${step.version}'s changes.${index} (${change.op} on ${change.resource})`;
    const resource = step.resources.get(change.resource);
    if (resource === undefined) return;
    const kind = bodyKindOf(change);
    const successorBodies = () => bodiesOf(successor, resource.successorTemplate, step.successor, kind ?? 'success');
    const derivedBodies = () => bodiesOf(derived, resource.template, step.version, kind ?? 'success');
    const hasField = (path: string) => derivedBodies().schemas.some((schema) => declares(schema, path));
    switch (change.op) {
      case 'rename':
      case 'scale':
      case 'map':
      case 'move':
        if (!hasField(change.field))
          problems.push(`${where}: version ${step.successor}'s document has no field that becomes ${change.field}`);
        return;
      case 'link':
        if (change.field !== LINK_HEADER_FIELD && !hasField(change.field))
          problems.push(`${where}: version ${step.successor}'s document has no field that becomes ${change.field}`);
        return;
      case 'envelope':
        if (!successorBodies().schemas.some((schema) => unwrapped(schema, change.field.split('.')) !== schema))
          problems.push(`${where}: version ${step.successor}'s bodies hold nothing under ${change.field}`);
        return;
      case 'status': {
        const answered = operationsOf(successor, resource.successorTemplate, step.successor).some(
          (operation) => isObject(operation.responses) && String(change.from) in operation.responses,
        );
        if (!answered) problems.push(`${where}: version ${step.successor}'s document answers no status ${change.from}`);
        return;
      }
      case 'header': {
        const name = change.name.toLowerCase();
        const named = operationsOf(successor, resource.successorTemplate, step.successor).some(
          (operation) =>
            Object.values(isObject(operation.responses) ? operation.responses : {}).some(
              (response) =>
                isObject(response) &&
                isObject(response.headers) &&
                Object.keys(response.headers).some((header) => header.toLowerCase() === name),
            ) ||
            (Array.isArray(operation.parameters) &&
              (operation.parameters as unknown[]).some(
                (parameter) =>
                  isObject(parameter) && parameter.in === 'header' && String(parameter.name).toLowerCase() === name,
              )),
        );
        if (!named) problems.push(`${where}: version ${step.successor}'s document has no header ${change.name}`);
        return;
      }
      case 'path':
        if (operationsOf(successor, change.to, step.successor).length === 0)
          problems.push(`${where}: version ${step.successor}'s document has no path ${change.to}`);
        return;
      case 'module': {
        const module = step.modules.get(change.module);
        if (module === undefined) return;
        const problem = roundTripProblem(module, successorBodies().examples, limits);
        if (problem !== undefined)
          problems.push(`${where}: ${change.module} does not give back version ${step.successor}'s ${problem}`);
        return;
      }
      default:
        return;
    }
  });
  return problems;
}

/**
 * What the contract gate needs of a policy's compiled translations (services/users-orders/tools/openapi-snapshots.ts):
 * which versions are declared as changes, and each one's document from the document of the version its chain ends
 * at, with the problems of its own declarations against the documents.
 */
export function translatedVersions(compiled: CompiledTranslations): {
  versions: number[];
  derive(
    version: number,
    documentOf: (version: number) => object | undefined,
  ): { from: number; document: object | undefined; problems: string[] };
} {
  return {
    versions: [...compiled.versions.keys()].sort((a, b) => a - b),
    derive(version, documentOf) {
      const { served, steps } = compiled.chain(version);
      const newest = documentOf(served);
      if (newest === undefined || steps.length === 0) return { from: served, document: newest, problems: [] };
      const successor = deriveDocument(newest, steps.slice(1));
      const document = deriveDocument(successor, steps.slice(0, 1));
      return { from: served, document, problems: declarationProblems(steps[0] as CompiledStep, successor, document) };
    },
  };
}
