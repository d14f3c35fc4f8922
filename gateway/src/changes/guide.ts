import { compareDocuments, type ContractChange } from '@version-router/platform/compatibility';
import {
  LINK_HEADER_FIELD,
  fieldOf,
  successorFieldOf,
  type ChangeOperation,
  type VersionChange,
} from '../translation/changes.js';
import { compileTranslations } from '../translation/compile.js';
import {
  deriveDocument,
  matchesTemplate,
  renamedDocumentPath,
  resourcePattern,
} from '../translation/derive-document.js';
import { fieldSegments } from '../translation/field-path.js';
import type { RequestSchemes } from '../versions/schemes.js';
import { guideCallForms, type CallOfForm } from '../versions/call-forms.js';
import type { ListedResource } from '../translation/templates.js';

/**
 * One thing a client must (breaking) or may (compatible) change when it moves to the successor: declared in
 * the policy (`declared: true`: renamed, converted, added, removed, mapped), or found between the documents.
 */
export interface GuideChange {
  change:
    | 'added'
    | 'removed'
    | 'changed'
    | 'renamed'
    | 'converted'
    | 'mapped'
    | 'moved'
    | 'wrapped'
    | 'status changed'
    | 'header renamed'
    | 'endpoint renamed'
    | 'links rewritten'
    | 'translated by module';
  kind:
    'endpoint' | 'parameter' | 'status' | 'field' | 'header' | 'request body' | 'response' | 'operation' | 'document';
  /** The field (`items[].total`), parameter, status, header or keyword the change is about. */
  name: string;
  /**
   * Where in the operation: `response 200 (application/json)`, `query`, `request body (application/json)`; '' for a
   * whole endpoint or status.
   */
  where: string;
  breaking: boolean;
  /**
   * The declaration's sentence, or the classifier's own words, e.g. "[Removed] property `total` in Response 200 content
   * (application/json)".
   */
  description: string;
  /** A declared change: the policy says it, so it is listed whether or not the documents show it. */
  declared?: true;
  /**
   * What it is in the successor: the field's name (renamed, converted, moved), the status (status changed), the
   * header's name (header renamed), the path (endpoint renamed).
   */
  to?: string;
  /** Successor value = this version's × factor (converted). */
  factor?: number;
  /**
   * The field's type in each version, in words (`decimal`, `integer`, `string`), where the documents say (converted).
   */
  from_type?: string;
  to_type?: string;
  /** This version's values → the successor's (mapped). */
  values?: Record<string, string | number | boolean>;
}

interface GuideOperation {
  method: string;
  /** The operation's path in the version being left, and in its successor. */
  path: string;
  successor_path: string;
  /**
   * Each way a client calls it under the policy (path, header, query, media type) and what it sends instead
   * (`withCallForms`); none from the documents alone.
   */
  forms: CallOfForm[];
  changes: GuideChange[];
}

export interface MigrationGuide {
  version: number;
  successor: number;
  breaking_changes: number;
  compatible_changes: number;
  operations: GuideOperation[];
  /** Changes outside any operation (shared components, servers, security). */
  other_changes: GuideChange[];
}

type Document = { paths?: Record<string, unknown> } & Record<string, unknown>;
type Key = string | number;

const METHODS: ReadonlySet<unknown> = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
/** Stands for the version segment, so one operation of two versions (`/v1/…`, `/v2/…`) compares as one path. */
const VERSION_SEGMENT = '/v{version}';

/** The document with each path's own version segment (`/v1`, `/api/v1`) replaced by the placeholder. */
function withoutVersionInPaths(document: Document, version: number): Document {
  const own = new RegExp(`^(/api)?/v${version}(?=/|$)`);
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).map(([path, item]) => [path.replace(own, `$1${VERSION_SEGMENT}`), item]),
  );
  return { ...document, paths };
}

function valueAt(document: unknown, at: readonly Key[]): unknown {
  let node = document;
  for (const key of at) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<Key, unknown>)[key];
  }
  return node;
}

/** JSON Schema's type in the words a reader uses: `number` is a decimal. */
const typeWord = (type: unknown): string | undefined =>
  type === 'number' ? 'decimal' : typeof type === 'string' ? type : undefined;

/** The type of a field in an operation's first 2xx JSON response, in words. */
function fieldType(operation: unknown, field: string): string | undefined {
  const responses = Object.entries((valueAt(operation, ['responses']) ?? {}) as Record<string, unknown>).filter(
    ([status]) => status.startsWith('2'),
  );
  for (const [, response] of responses) {
    const content = (valueAt(response, ['content']) ?? {}) as Record<string, unknown>;
    const json = Object.keys(content).find((type) => /^application\/(?:[\w.+-]+\+)?json\b/.test(type));
    if (json === undefined) continue;
    let schema = valueAt(content, [json, 'schema']);
    for (const { name, array } of fieldSegments(field))
      schema = valueAt(schema, array ? ['properties', name, 'items'] : ['properties', name]);
    const type = typeWord(valueAt(schema, ['type']));
    if (type !== undefined) return type;
  }
  return undefined;
}

/** What the guide calls each declared operation. */
const DECLARED: Readonly<Record<ChangeOperation, GuideChange['change']>> = {
  rename: 'renamed',
  scale: 'converted',
  add: 'added',
  remove: 'removed',
  map: 'mapped',
  move: 'moved',
  envelope: 'wrapped',
  status: 'status changed',
  header: 'header renamed',
  path: 'endpoint renamed',
  link: 'links rewritten',
  module: 'translated by module',
};

/** Where in an operation a body change applies: '' for 2xx bodies (and requests), error answers otherwise. */
const whereOf = (change: VersionChange): string => ('on' in change && change.on === 'error' ? 'error responses' : '');

/** The words of a declared change without the place it applies. */
function plainWords(change: Pick<GuideChange, 'change' | 'kind' | 'name' | 'to' | 'factor'>): string {
  switch (change.change) {
    case 'renamed':
      return `${change.name} is called ${change.to ?? change.name}.`;
    case 'converted':
      return `${change.to ?? change.name} is ${change.name} × ${change.factor ?? 1}.`;
    case 'added':
      return `${change.name} is new.`;
    case 'removed':
      return `${change.name} is gone.`;
    case 'moved':
      return `${change.name} moved to ${change.to ?? change.name}.`;
    case 'wrapped':
      return `The successor wraps the body in ${change.name}.`;
    case 'status changed':
      return `The successor answers ${change.to ?? change.name} where this version answers ${change.name}.`;
    case 'header renamed':
      return `The header ${change.name} is called ${change.to ?? change.name} in the successor.`;
    case 'endpoint renamed':
      return `${change.name} is served at ${change.to ?? change.name}.`;
    case 'links rewritten':
      return change.kind === 'header'
        ? "The Link header's links name the successor's paths."
        : `${change.name} links to the successor's paths.`;
    case 'translated by module':
      return `The bodies are translated by ${change.name}.`;
    case 'mapped':
      return `${change.name} takes other values.`;
    default:
      return `${change.name} changed.`;
  }
}

/**
 * What a declared change says when its declaration has no description of its own; a change of error answers says
 * so ("user_id is called customer_id in error responses.").
 */
export function plainDescription(
  change: Pick<GuideChange, 'change' | 'kind' | 'name' | 'to' | 'factor'> & { where?: string },
): string {
  const words = plainWords(change);
  return change.where === undefined || change.where === '' ? words : `${words.replace(/\.$/, '')} in ${change.where}.`;
}

/**
 * A declaration as the guide lists it, with `breaking` by SPEC's lists: a renamed, moved, removed or converted
 * field, changed enum values, a body wrapped, another status, header or path break a client; a field added to the
 * successor's responses does not, nor links that name the successor (a client follows them as they are). What a
 * module changes is unknown to the gateway: breaking.
 */
function declaredEntry(
  change: VersionChange,
  before: unknown,
  after: unknown,
  paths: { path: string; successorPath: string },
): GuideChange {
  const entry = declaredWords(change, before, after, paths);
  return { ...entry, description: change.description ?? plainDescription(entry) };
}

function declaredWords(
  change: VersionChange,
  before: unknown,
  after: unknown,
  paths: { path: string; successorPath: string },
): Omit<GuideChange, 'description'> {
  const common = {
    change: DECLARED[change.op],
    kind: 'field' as const,
    where: whereOf(change),
    declared: true as const,
  };
  switch (change.op) {
    case 'rename':
      return { ...common, name: change.field, to: change.to, breaking: true };
    case 'scale': {
      const to = successorFieldOf(change) as string;
      const fromType = fieldType(before, change.field);
      const toType = fieldType(after, to);
      return {
        ...common,
        name: change.field,
        to,
        factor: change.factor,
        ...(fromType === undefined ? {} : { from_type: fromType }),
        ...(toType === undefined ? {} : { to_type: toType }),
        breaking: true,
      };
    }
    case 'add':
      return { ...common, name: change.field, breaking: false };
    case 'remove':
      return { ...common, name: change.field, breaking: true };
    case 'map':
      return { ...common, name: change.field, values: change.values, breaking: true };
    case 'move':
      return { ...common, name: change.field, to: change.to, breaking: true };
    case 'envelope':
      return { ...common, kind: 'response', name: change.field, breaking: true };
    case 'status':
      return { ...common, kind: 'status', name: String(change.to), to: String(change.from), breaking: true };
    case 'header':
      return { ...common, kind: 'header', name: change.to, to: change.name, breaking: true };
    case 'path':
      return { ...common, kind: 'endpoint', name: paths.path, to: paths.successorPath, breaking: true };
    case 'link':
      return {
        ...common,
        kind: change.field === LINK_HEADER_FIELD ? 'header' : 'field',
        name: change.field,
        breaking: false,
      };
    case 'module':
      return { ...common, kind: 'operation', name: change.module, breaking: true };
  }
}

const verb = (action: ContractChange['action'], whole: boolean): GuideChange['change'] =>
  !whole || action === 'replace' || action === 'rename' ? 'changed' : action === 'add' ? 'added' : 'removed';

/** `properties.a.items.properties.b` → `a[].b`; undefined when the position is the schema itself. */
function fieldName(inSchema: readonly Key[]): { name: string; whole: boolean } | undefined {
  const names: string[] = [];
  let whole = false;
  for (let i = 0; i < inSchema.length; i++) {
    const key = inSchema[i];
    if (key === 'properties' && i + 1 < inSchema.length) {
      names.push(String(inSchema[i + 1]));
      i++;
      whole = i === inSchema.length - 1;
    } else if (key === 'items') names[names.length - 1] = `${names.at(-1) ?? ''}[]`;
    else break;
  }
  return names.length === 0 ? undefined : { name: names.join('.'), whole };
}

interface Described {
  kind: GuideChange['kind'];
  name: string;
  where: string;
  change: GuideChange['change'];
  /** From a schema's `required` list: the field became required or optional. */
  required?: true;
}

/** What one change inside an operation (`rest`: the keys below the method) is about. */
function describeInOperation(
  change: ContractChange,
  rest: readonly Key[],
  before: unknown,
  operationAt: readonly Key[],
): Described | undefined {
  const [section, first, second, third] = rest;
  if (section === undefined) return { kind: 'endpoint', name: '', where: '', change: verb(change.action, true) };
  if (section === 'parameters' && first !== undefined) {
    // A whole parameter added or removed is the change's value; inside one, the index is the old document's.
    const whole = rest.length === 2;
    const parameter = ((whole ? change.value : valueAt(before, [...operationAt, 'parameters', first])) ?? {}) as {
      name?: string;
      in?: string;
    };
    return {
      kind: 'parameter',
      name: String(parameter.name ?? first),
      where: String(parameter.in ?? ''),
      change: verb(change.action, whole),
    };
  }
  const body = (inSchema: readonly Key[], where: string, whole: Described): Described | undefined => {
    // A field's `required` entry moves with the field: it is reported once, as the field.
    if (inSchema.at(-2) === 'required') {
      const name = String(change.value);
      return { kind: 'field', name, where, change: 'changed', required: true };
    }
    const field = fieldName(inSchema);
    return field === undefined
      ? whole
      : { kind: 'field', name: field.name, where, change: verb(change.action, field.whole) };
  };
  if (section === 'responses' && first !== undefined) {
    const status = String(first);
    if (rest.length === 2) return { kind: 'status', name: status, where: '', change: verb(change.action, true) };
    if (second === 'headers') {
      // The first header of a response adds the whole `headers` map.
      const name = third === undefined ? Object.keys(change.value ?? {}).join(', ') : String(third);
      return { kind: 'header', name, where: `response ${status}`, change: verb(change.action, rest.length <= 4) };
    }
    if (second === 'content' && third !== undefined && rest[4] === 'schema') {
      return body(rest.slice(5), `response ${status} (${String(third)})`, {
        kind: 'response',
        name: status,
        where: `response ${status} (${String(third)})`,
        change: 'changed',
      });
    }
    return { kind: 'response', name: status, where: `response ${status}`, change: 'changed' };
  }
  if (section === 'requestBody') {
    if (first === 'content' && second !== undefined && third === 'schema') {
      return body(rest.slice(4), `request body (${String(second)})`, {
        kind: 'request body',
        name: '',
        where: `request body (${String(second)})`,
        change: 'changed',
      });
    }
    return { kind: 'request body', name: '', where: 'request body', change: verb(change.action, rest.length === 1) };
  }
  return { kind: 'operation', name: String(section), where: '', change: 'changed' };
}

/** A field made required or optional where the same field is added or removed says nothing more. */
function foldRequired(changes: readonly GuideChange[], fromRequired: ReadonlySet<GuideChange>): GuideChange[] {
  const key = (change: GuideChange) => `${change.where}\n${change.name}`;
  const wholeFields = new Set(
    changes.filter((change) => change.kind === 'field' && change.change !== 'changed').map(key),
  );
  return changes.filter((change) => !(fromRequired.has(change) && wholeFields.has(key(change))));
}

/**
 * The fields a declaration explains, as the documents' differences name them: the field in each version, and for a
 * move the parents it leaves or makes (`money` of `money.currency`).
 */
function explainedFields(change: VersionChange): string[] {
  const names = [fieldOf(change), successorFieldOf(change)].filter((name) => name !== undefined);
  if (change.op !== 'move') return names;
  const parents = (path: string) =>
    path
      .split('.')
      .slice(0, -1)
      .map((_, i, all) => all.slice(0, i + 1).join('.'));
  return [...names, ...parents(change.field), ...parents(change.to)];
}

/** The declarations that change an operation's structure rather than its fields. */
const STRUCTURAL: ReadonlySet<ChangeOperation> = new Set(['path', 'envelope', 'status', 'header']);

/** The successor's document with only the structural declarations read backwards (translation/derive-document.ts). */
function aligned(
  after: object,
  version: number,
  successor: number,
  structural: readonly VersionChange[],
  resources: readonly ListedResource[],
): Document {
  // Every resource in both versions, the renamed ones first: the successor's path of one is this version's.
  const renamed = new Set(structural.flatMap((change) => (change.op === 'path' ? [change.resource] : [])));
  const listed = [
    ...new Set([
      ...resources.map(({ path }) => path),
      ...structural.flatMap((change) => (change.op === 'path' ? [change.resource, change.to] : [change.resource])),
    ]),
  ]
    .sort((a, b) => Number(renamed.has(b)) - Number(renamed.has(a)))
    .map((path) => ({ path, versions: undefined }));
  const compiled = compileTranslations({
    versions: [{ version, successor, changes: structural }, { version: successor }],
    resources: listed,
  });
  return deriveDocument(after, compiled.chain(version).steps) as Document;
}

/**
 * What a client of `version` changes to move to `successor`, per operation: first what the policy declares
 * changed on the operation's resource (`declared`), then what the two versions' OpenAPI documents, compared by
 * the classifier the contracts gate uses, differ in that no declaration explains. Prose and examples are left
 * out; without a declaration a renamed field shows as one removed and one added.
 */
export function buildMigrationGuide(
  version: number,
  successor: number,
  before: object,
  after: object,
  declared: readonly VersionChange[] = [],
  resources: readonly ListedResource[] = [],
): MigrationGuide {
  const left = withoutVersionInPaths(before as Document, version);
  // The successor's document in the structure this version has (endpoints, envelopes, statuses and headers as
  // declared): what differs from there on is what the fields do.
  const structural = declared.filter((change) => STRUCTURAL.has(change.op));
  const right =
    structural.length === 0
      ? withoutVersionInPaths(after as Document, successor)
      : withoutVersionInPaths(aligned(after, version, successor, structural, resources), version);
  const renames = declared.flatMap((change) =>
    change.op === 'path' ? [{ from: change.resource, to: change.to }] : [],
  );
  /** An operation's path in the successor: the same, or where a `path` change moved its resource. */
  const successorPathOf = (path: string): string => {
    const match = /^((?:\/api)?\/v\{version\})(.*)$/.exec(path);
    const rename = match === null ? undefined : renames.find(({ from }) => matchesTemplate(match[2] as string, from));
    const there =
      match === null || rename === undefined
        ? path
        : `${match[1]}${renamedDocumentPath(match[2] as string, rename.from, rename.to)}`;
    return there.replace(VERSION_SEGMENT, `/v${successor}`);
  };
  const operations = new Map<string, GuideOperation>();
  const otherChanges: GuideChange[] = [];
  const fromRequired = new Set<GuideChange>();
  const operationOf = (method: string, path: string): GuideOperation => {
    const key = `${method} ${path}`;
    let operation = operations.get(key);
    if (operation === undefined) {
      const at = path.replace(VERSION_SEGMENT, `/v${version}`);
      operation = { method, path: at, successor_path: successorPathOf(path), forms: [], changes: [] };
      operations.set(key, operation);
    }
    return operation;
  };

  // The declarations first, on every operation of their resource; the fields they name are explained.
  const explained = new Map<string, Set<string>>();
  for (const [path, item] of Object.entries(left.paths ?? {})) {
    const real = path.replace(VERSION_SEGMENT, `/v${version}`);
    const own = declared.filter((change) => resourcePattern(change.resource, version).test(real));
    if (own.length === 0) continue;
    for (const method of Object.keys(item as object).filter((key) => METHODS.has(key))) {
      const operation = operationOf(method.toUpperCase(), path);
      const successorOperation = valueAt(right, ['paths', path, method]);
      const paths = { path: operation.path, successorPath: operation.successor_path };
      operation.changes.push(
        ...own.map((change) =>
          declaredEntry(change, valueAt(left, ['paths', path, method]), successorOperation, paths),
        ),
      );
      explained.set(`${method.toUpperCase()} ${path}`, new Set(own.flatMap(explainedFields)));
    }
  }

  for (const change of compareDocuments(left, right)) {
    if (change.documentation) continue;
    const entry = ({ required, ...described }: Described): GuideChange => {
      const guideChange: GuideChange = {
        change: described.change,
        kind: described.kind,
        name: described.name,
        where: described.where,
        breaking: change.compatibility === 'breaking',
        description: change.description,
      };
      if (required) fromRequired.add(guideChange);
      return guideChange;
    };
    const [top, path, method] = change.at;
    if (top !== 'paths' || path === undefined) {
      otherChanges.push(entry({ kind: 'document', name: change.path, where: '', change: verb(change.action, false) }));
      continue;
    }
    if (method === undefined) {
      // A whole path added or removed: each of its operations is an endpoint added or removed.
      const item = (valueAt(change.action === 'add' ? right : left, ['paths', path]) ?? {}) as Record<string, unknown>;
      for (const name of Object.keys(item).filter((key) => METHODS.has(key))) {
        operationOf(name.toUpperCase(), String(path)).changes.push(
          entry({ kind: 'endpoint', name: '', where: '', change: verb(change.action, true) }),
        );
      }
      continue;
    }
    const isMethod = METHODS.has(method);
    const described = isMethod
      ? describeInOperation(change, change.at.slice(3), left, ['paths', path, method])
      : {
          kind: 'operation' as const,
          name: change.at.slice(2).join('.'),
          where: '',
          change: verb(change.action, false),
        };
    if (described === undefined) continue;
    const key = `${isMethod ? String(method).toUpperCase() : '*'} ${String(path)}`;
    if (described.kind === 'field' && explained.get(key)?.has(described.name) === true) continue;
    operationOf(isMethod ? String(method).toUpperCase() : '*', String(path)).changes.push(entry(described));
  }

  const grouped = [...operations.values()].map((operation) => ({
    ...operation,
    changes: foldRequired(operation.changes, fromRequired),
  }));
  const all = [...grouped.flatMap((operation) => operation.changes), ...otherChanges];
  return {
    version,
    successor,
    breaking_changes: all.filter((change) => change.breaking).length,
    compatible_changes: all.filter((change) => !change.breaking).length,
    operations: grouped,
    other_changes: otherChanges,
  };
}

/** The guide with each operation's forms of call under the policy's schemes and versioned resources. */
export function withCallForms(
  guide: MigrationGuide,
  schemes: RequestSchemes,
  resources: readonly ListedResource[],
): MigrationGuide {
  const templates = resources.map(({ path }) => path);
  const operations = guide.operations.map((operation) => ({
    ...operation,
    forms: guideCallForms(
      operation.method,
      { path: operation.path, successorPath: operation.successor_path },
      guide.version,
      guide.successor,
      schemes,
      templates,
    ),
  }));
  return { ...guide, operations };
}
