import type { ChangeOperation, VersionChange } from './changes.js';

/** Reports one problem at a JSON path below the version entry (`changes`, 2, `to`). */
type Fail = (message: string, ...path: (string | number)[]) => void;

interface ChangingVersion {
  readonly version: number;
  readonly successor?: number | undefined;
  readonly changes?: readonly VersionChange[] | undefined;
}

/** What the rules need of the policy file: its resources and each version's successor and changes. */
interface ChangesOfPolicy {
  readonly resources: readonly string[];
  readonly versions: readonly ChangingVersion[];
}

/** The OpenAPI document is derived from the other resources' changes, never translated itself. */
const DOCUMENT_RESOURCE = '/openapi.json';

/** Everything up to the last dot: the object a field lives in (`items[]` for `items[].user_id`). */
const parentOf = (field: string): string => field.slice(0, Math.max(field.lastIndexOf('.'), 0));

/** The name a change leaves the field under in the successor: `to` for rename (and scale when given). */
function successorName(change: VersionChange): string | undefined {
  switch (change.op) {
    case 'rename':
      return change.to;
    case 'scale':
      return change.to ?? change.field;
    case 'add':
      return change.field;
    default:
      return undefined;
  }
}

/**
 * The rules of one version's `changes` beyond their shape (docs/declared-versions.md "Versions declared as changes"):
 * a successor to change into, listed resources, fields that are names (not `[]`) where a name is changed,
 * a rename within one object, a one-to-one map, and no two changes of one field that contradict. A map and a
 * rename of one field go together (the map names the field as this version does); any other pair contradicts,
 * as do two changes that leave different fields under one name in the successor.
 */
export function checkVersionChanges(entry: ChangingVersion, resources: readonly string[], fail: Fail): void {
  const changes = entry.changes;
  if (changes === undefined || changes.length === 0) return;
  if (entry.successor === undefined) fail('changes need a successor to change into', 'changes');
  const listed = new Set(resources);
  /** Per resource and field as this version names it, the first change of it; likewise per successor name. */
  const byField = new Map<string, { index: number; op: ChangeOperation }[]>();
  const bySuccessorName = new Map<string, number>();
  changes.forEach((change, index) => {
    const at = (...path: (string | number)[]) => ['changes', index, ...path];
    if (!listed.has(change.resource)) {
      fail(`resource "${change.resource}" is not listed in resources`, ...at('resource'));
    } else if (change.resource === DOCUMENT_RESOURCE) {
      const why = "its document follows from the other resources' changes";
      fail(`${DOCUMENT_RESOURCE} is not translated: ${why}`, ...at('resource'));
    }
    if (change.op !== 'scale' && change.op !== 'map' && change.field.endsWith('[]')) {
      fail(`${change.op} names a field, not the items of an array ("${change.field}")`, ...at('field'));
    }
    const to = change.op === 'rename' || change.op === 'scale' ? change.to : undefined;
    if (to !== undefined && (parentOf(to) !== parentOf(change.field) || to.endsWith('[]'))) {
      fail(`"${to}" must name a field in the same object as "${change.field}"`, ...at('to'));
    }
    if (change.op === 'map') checkOneToOne(change.values, (message, key) => fail(message, ...at('values', key)));

    const fieldKey = `${change.resource} ${change.field}`;
    const earlier = byField.get(fieldKey) ?? [];
    const contradicted = earlier.find((other) => !goTogether(other.op, change.op));
    if (contradicted !== undefined) {
      const by = `changes.${contradicted.index} (${contradicted.op})`;
      const message = `"${change.field}" on ${change.resource} is already changed by ${by}`;
      fail(`${message}; two changes of one field contradict`, ...at('field'));
    }
    byField.set(fieldKey, [...earlier, { index, op: change.op }]);
    const name = successorName(change);
    if (name === undefined) return;
    const nameKey = `${change.resource} ${name}`;
    const taken = bySuccessorName.get(nameKey);
    if (taken !== undefined && contradicted === undefined) {
      const message = `changes.${taken} already leaves a field named "${name}" on ${change.resource} in the successor`;
      fail(message, ...at(change.op === 'add' ? 'field' : 'to'));
    }
    bySuccessorName.set(nameKey, index);
  });
}

/** A map of a field's values and a rename of the field describe one field together; any other pair contradicts. */
const goTogether = (a: ChangeOperation, b: ChangeOperation): boolean =>
  (a === 'map' && b === 'rename') || (a === 'rename' && b === 'map');

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

/**
 * A version with changes is served from its successor; one with changes is served from its own, and so on.
 * A loop of such versions would be followed forever.
 */
export function checkChainsEnd(policy: ChangesOfPolicy, fail: (index: number, message: string) => void): void {
  const byVersion = new Map(policy.versions.map((entry) => [entry.version, entry]));
  policy.versions.forEach((entry, index) => {
    const seen = new Set([entry.version]);
    for (let step = entry; step.changes !== undefined && step.changes.length > 0 && step.successor !== undefined;) {
      if (seen.has(step.successor)) {
        const message = `the successors of versions with changes come back to version ${step.successor}`;
        fail(index, `version ${entry.version}: ${message}; a chain must end at a version without changes`);
        return;
      }
      seen.add(step.successor);
      const next = byVersion.get(step.successor);
      if (next === undefined) return;
      step = next;
    }
  });
}
