import { bodyKindOf, fieldOf, LINK_HEADER_FIELD, type ChangeOperation, type VersionChange } from './changes.js';
import { loopOf, type ChainEntry } from './chain.js';
import { fieldSegments } from './field-path.js';
import { isListedFor, templateParameters, templateProblem, type ListedResource } from './templates.js';

/** Reports one problem at a JSON path below the version entry (`changes`, 2, `to`). */
type Fail = (message: string, ...path: (string | number)[]) => void;

/** The OpenAPI document is derived from the other resources' changes, never translated itself. */
const DOCUMENT_RESOURCE = '/openapi.json';

/**
 * Headers a `header` change may not rename: the version policy's, the ones the gateway owns or rewrites itself,
 * and those that describe the bytes or the connection (lower case).
 */
const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'deprecation',
  'sunset',
  'link',
  'api-version',
  'api-supported-versions',
  'api-deprecated-versions',
  'api-version-requested',
  'api-consumer',
  'api-key',
  'vary',
  'retry-after',
  'x-request-id',
  'etag',
  'if-match',
  'if-none-match',
  'location',
  'content-location',
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'accept',
  'accept-encoding',
  'accept-ranges',
  'range',
  'if-range',
  'host',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'te',
  'expect',
]);

/** Everything up to the last dot: the object a field lives in (`items[]` for `items[].user_id`). */
const parentOf = (field: string): string => field.slice(0, Math.max(field.lastIndexOf('.'), 0));

/** Up to and including the last `[]` segment (`lines[].product` → `lines[]`); '' without arrays. */
const arraysOf = (field: string): string => {
  const at = field.lastIndexOf('[]');
  return at === -1 ? '' : field.slice(0, at + 2);
};

/**
 * The parents of a moved field below where the move happens (the common parent of `field` and `to`): `customer`
 * for `customer_id` → `customer.id`. Another change of one of them would move the ground under the move.
 */
function moveParents(field: string, to: string): string[] {
  const from = fieldSegments(field).map(({ name }) => name);
  const into = fieldSegments(to).map(({ name }) => name);
  let common = 0;
  while (common < from.length - 1 && common < into.length - 1 && from[common] === into[common]) common++;
  const prefix = field.split('.').slice(0, common).join('.');
  const below = (segments: string[]) =>
    segments
      .slice(common, -1)
      .map((_, i) => [prefix, ...segments.slice(common, common + i + 1)].filter(Boolean).join('.'));
  return [...below(from), ...below(into)];
}

/** A change's place in the checks: which body it touches (success, error) or none. */
const bodyKey = (change: VersionChange): string => `${change.resource} ${bodyKindOf(change) ?? 'none'}`;

/**
 * The name a change leaves a field under in the successor, which no other change may leave a field under too: `to`
 * of a rename or move (and a scale's, else its field), an added field.
 */
function successorName(change: VersionChange): string | undefined {
  switch (change.op) {
    case 'rename':
    case 'move':
      return change.to;
    case 'scale':
      return change.to ?? change.field;
    case 'add':
      return change.field;
    default:
      return undefined;
  }
}

/** A map, or a link, and a rename of one field describe one field together; any other pair contradicts. */
const goTogether = (a: ChangeOperation, b: ChangeOperation): boolean =>
  (a === 'rename' && (b === 'map' || b === 'link')) || (b === 'rename' && (a === 'map' || a === 'link'));

/**
 * The rules of one version's `changes` beyond their shape (docs/declared-versions.md "Versions declared as changes"):
 * a successor to change into, listed resources, the shape of each operation's names, no two changes that
 * contradict, and every resource of the version served by the successor (at the same path or a declared one).
 */
export function checkVersionChanges(entry: ChainEntry, resources: readonly ListedResource[], fail: Fail): void {
  const changes = entry.changes;
  if (changes === undefined) return;
  const successor = entry.successor;
  if (successor === undefined) {
    fail('changes need a successor to change into', 'changes');
    return;
  }
  const byPath = new Map(resources.map((resource) => [resource.path, resource]));
  /** Per resource, body and field as this version names it, the changes of it; likewise per successor name. */
  const byField = new Map<string, { index: number; op: ChangeOperation }[]>();
  const bySuccessorName = new Map<string, number>();
  /** One envelope per resource and body, one path per resource, one answer per status, one name per header. */
  const once = new Map<string, number>();
  const claimOnce = (key: string, index: number, message: (earlier: number) => string, ...at: (string | number)[]) => {
    const earlier = once.get(key);
    if (earlier !== undefined) fail(message(earlier), 'changes', index, ...at);
    else once.set(key, index);
  };
  const moved: { index: number; key: string; parents: string[] }[] = [];
  const renamed = new Map<string, string>();

  changes.forEach((change, index) => {
    const at = (...path: (string | number)[]) => ['changes', index, ...path];
    const resource = byPath.get(change.resource);
    if (resource === undefined) {
      fail(`resource "${change.resource}" is not listed in resources`, ...at('resource'));
      return;
    }
    if (change.resource === DOCUMENT_RESOURCE) {
      const why = "its document follows from the other resources' changes";
      fail(`${DOCUMENT_RESOURCE} is not translated: ${why}`, ...at('resource'));
      return;
    }
    if (!isListedFor(resource, entry.version)) {
      fail(`resource "${change.resource}" is not listed for version ${entry.version}`, ...at('resource'));
      return;
    }
    const key = bodyKey(change);
    switch (change.op) {
      case 'rename':
      case 'add':
      case 'remove':
        if (change.field.endsWith('[]'))
          fail(`${change.op} names a field, not the items of an array ("${change.field}")`, ...at('field'));
        break;
      case 'move':
        checkMove(change.field, change.to, (message, ...path) => fail(message, ...at(...path)));
        moved.push({ index, key, parents: moveParents(change.field, change.to) });
        break;
      case 'envelope':
        claimOnce(key, index, (earlier) => `changes.${earlier} already wraps these bodies of ${change.resource}`, 'op');
        break;
      case 'status':
        if (change.from === change.to) fail(`status ${change.from} is the same in both versions`, ...at('to'));
        claimOnce(
          `${change.resource} status ${change.from}`,
          index,
          (earlier) => `changes.${earlier} already answers status ${change.from} of ${change.resource}`,
          'from',
        );
        break;
      case 'header':
        checkHeader(change, (message, ...path) => fail(message, ...at(...path)));
        claimOnce(
          `${change.resource} header ${change.name.toLowerCase()}`,
          index,
          (earlier) => `changes.${earlier} already renames the successor's header ${change.name}`,
          'name',
        );
        claimOnce(
          `${change.resource} own header ${change.to.toLowerCase()}`,
          index,
          (earlier) => `changes.${earlier} already gives this version a header ${change.to}`,
          'to',
        );
        break;
      case 'path':
        claimOnce(
          `${change.resource} path`,
          index,
          (earlier) => `changes.${earlier} already says where the successor serves ${change.resource}`,
          'op',
        );
        checkPath(change.resource, change.to, byPath, successor, (message) => fail(message, ...at('to')));
        renamed.set(change.resource, change.to);
        break;
      default:
        break;
    }
    if (change.op === 'rename' || change.op === 'scale') {
      const to = change.to;
      if (to !== undefined && (parentOf(to) !== parentOf(change.field) || to.endsWith('[]')))
        fail(`"${to}" must name a field in the same object as "${change.field}"`, ...at('to'));
    }
    if (change.op === 'map') checkOneToOne(change.values, (message, value) => fail(message, ...at('values', value)));
    if (change.op === 'link' && change.field === LINK_HEADER_FIELD)
      claimOnce(
        `${change.resource} link header`,
        index,
        (earlier) => `changes.${earlier} already rewrites Link`,
        'field',
      );

    const field = fieldOf(change);
    if (field !== undefined) {
      const fieldKey = `${key} ${field}`;
      const earlier = byField.get(fieldKey) ?? [];
      const contradicted = earlier.find((other) => !goTogether(other.op, change.op));
      if (contradicted !== undefined) {
        const by = `changes.${contradicted.index} (${contradicted.op})`;
        const message = `"${field}" on ${change.resource} is already changed by ${by}`;
        fail(`${message}; two changes of one field contradict`, ...at('field'));
      }
      byField.set(fieldKey, [...earlier, { index, op: change.op }]);
      const name = successorName(change);
      if (name !== undefined && contradicted === undefined) {
        const nameKey = `${key} ${name}`;
        const taken = bySuccessorName.get(nameKey);
        if (taken !== undefined) {
          const message = `changes.${taken} already leaves a field named "${name}" on ${change.resource} in the successor`;
          fail(message, ...at(change.op === 'add' ? 'field' : 'to'));
        }
        bySuccessorName.set(nameKey, index);
      }
    }
  });

  // A move's parents below where it happens are the ground it moves over: no other change may rename them away.
  for (const move of moved) {
    for (const parent of move.parents) {
      const others = (byField.get(`${move.key} ${parent}`) ?? []).filter(({ index }) => index !== move.index);
      for (const other of others) {
        fail(
          `"${parent}" is a parent of the field changes.${move.index} moves; it cannot be changed (${other.op}) too`,
          'changes',
          other.index,
          'field',
        );
      }
    }
  }

  // Every resource of this version is one the successor serves: under its own path, or where a path change says;
  // two of them at one path could not be told apart on the way back.
  const servedAt = new Map<string, string>();
  resources.forEach((resource) => {
    if (!isListedFor(resource, entry.version)) return;
    const at = renamed.get(resource.path) ?? resource.path;
    const other = servedAt.get(at);
    if (other !== undefined)
      fail(
        `resources "${other}" and "${resource.path}" would both be served at "${at}" by version ${successor}`,
        'changes',
      );
    servedAt.set(at, resource.path);
    if (renamed.has(resource.path)) return;
    if (!isListedFor(resource, successor)) {
      fail(
        `resource "${resource.path}" is not listed for version ${successor}, which serves version ${entry.version}; ` +
          'a path change says where the successor serves it',
        'changes',
      );
    }
  });
}

/** A move stays within the items of the same arrays, and goes somewhere else. */
function checkMove(field: string, to: string, fail: Fail): void {
  if (field.endsWith('[]') || to.endsWith('[]')) {
    fail(`move names fields, not the items of an array ("${field.endsWith('[]') ? field : to}")`, 'field');
    return;
  }
  if (to === field) fail(`"${to}" is where "${field}" already is`, 'to');
  else if (arraysOf(field) !== arraysOf(to))
    fail(`"${to}" must be inside the same array items as "${field}" ("${arraysOf(field) || 'the body'}")`, 'to');
  else if (to.startsWith(`${field}.`) || field.startsWith(`${to}.`))
    fail(`"${to}" and "${field}" cannot hold one another`, 'to');
}

function checkHeader(change: Extract<VersionChange, { op: 'header' }>, fail: Fail): void {
  for (const key of ['name', 'to'] as const) {
    const header = change[key];
    if (RESERVED_HEADERS.has(header.toLowerCase()))
      fail(`${header} is a header the gateway sets or reads itself; it cannot be renamed`, key);
  }
  if (change.name.toLowerCase() === change.to.toLowerCase())
    fail(`${change.to} is the same header in both versions`, 'to');
}

/** A path change leads to a resource the successor lists, with the same parameters. */
function checkPath(
  resource: string,
  to: string,
  byPath: ReadonlyMap<string, ListedResource>,
  successor: number,
  fail: (message: string) => void,
): void {
  const problem = templateProblem(to);
  if (problem !== undefined) {
    fail(problem);
    return;
  }
  const target = byPath.get(to);
  if (to === resource) fail(`"${to}" is where the successor serves it already`);
  else if (target === undefined) fail(`resource "${to}" is not listed in resources`);
  else if (!isListedFor(target, successor)) fail(`resource "${to}" is not listed for version ${successor}`);
  else {
    const own = [...templateParameters(resource)].sort().join(', ');
    const theirs = [...templateParameters(to)].sort().join(', ');
    if (own !== theirs)
      fail(`"${to}" must have the parameters of "${resource}" (${own || 'none'}), not ${theirs || 'none'}`);
  }
}

/** Two values of this version mapped to one of the successor could not be told apart on the way back. */
function checkOneToOne(
  values: Readonly<Record<string, string | number | boolean>>,
  fail: (message: string, key: string) => void,
): void {
  const seen = new Map<string, string>();
  for (const [from, to] of Object.entries(values)) {
    const key = `${typeof to}:${String(to)}`;
    const other = seen.get(key);
    if (other !== undefined) {
      fail(`"${from}" and "${other}" both map to ${JSON.stringify(to)}; a map must be one-to-one`, from);
    } else seen.set(key, from);
  }
}

/** A chain of versions declared as changes that comes back round would be followed forever. */
export function checkChainsEnd(versions: readonly ChainEntry[], fail: (index: number, message: string) => void): void {
  versions.forEach((entry, index) => {
    const loop = loopOf(versions, entry.version);
    if (loop === undefined) return;
    const message = `the successors of versions with changes come back to version ${loop}`;
    fail(index, `version ${entry.version}: ${message}; a chain must end at a version without changes`);
  });
}
