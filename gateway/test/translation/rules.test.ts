import { describe, expect, it } from 'vitest';
import { versionPolicyFileSchema } from '../../src/versions/policy-file.js';

/** Every issue as the gateway prints it at start or a reload: JSON path, then the rule. */
function problems(file: unknown): string[] {
  const result = versionPolicyFileSchema.safeParse(file);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

const v1 = { version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2027-01-01T00:00:00Z', successor: 2 };

/** v1 declared as `changes` to v2, on the policy's default resources. */
const withChanges = (changes: unknown[], resources?: string[]) => ({
  default_version: 2,
  ...(resources === undefined ? {} : { resources }),
  versions: [
    { ...v1, changes },
    { version: 2, status: 'current' },
  ],
});

const rename = (field: string, to: string) => ({ resource: '/orders/:id', op: 'rename', field, to });

describe('the changes of a version in the policy file', () => {
  it("accepts SPEC's v1 declared as changes to v2", () => {
    const spec = [
      { ...rename('user_id', 'customer_id'), description: 'The customer identifier under its old name.' },
      { resource: '/orders/:id', op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
      { resource: '/orders/:id', op: 'add', field: 'currency' },
    ];
    expect(problems(withChanges(spec))).toEqual([]);
  });

  it('refuses an unknown operation and an unknown key, naming the change', () => {
    expect(problems(withChanges([{ resource: '/orders/:id', op: 'split', field: 'name' }]))).toEqual([
      'versions.0.changes.0.op: must be one of the operations rename, scale, add, remove, map, move, envelope, ' +
        'status, header, path, link, module',
    ]);
    expect(problems(withChanges([{ ...rename('user_id', 'customer_id'), factor: 2 }]))).toEqual([
      'versions.0.changes.0: Unrecognized key: "factor"',
    ]);
  });

  it('refuses changes on a version without a successor', () => {
    const file = {
      default_version: 2,
      versions: [v1, { version: 2, status: 'current', changes: [rename('user_id', 'customer_id')] }],
    };
    expect(problems(file)).toEqual(['versions.1.changes: version 2: changes need a successor to change into']);
  });

  it('refuses a resource the policy does not list, and the OpenAPI document as a resource of changes', () => {
    expect(problems(withChanges([{ ...rename('a', 'b'), resource: '/users/:id' }]))).toEqual([
      'versions.0.changes.0.resource: version 1: resource "/users/:id" is not listed in resources',
    ]);
    expect(problems(withChanges([{ ...rename('a', 'b'), resource: '/openapi.json' }]))).toEqual([
      'versions.0.changes.0.resource: version 1: /openapi.json is not translated: its document follows from the ' +
        "other resources' changes",
    ]);
  });

  it('refuses two changes of one field that contradict: renamed twice, renamed and removed', () => {
    expect(problems(withChanges([rename('user_id', 'customer_id'), rename('user_id', 'client_id')]))).toEqual([
      'versions.0.changes.1.field: version 1: "user_id" on /orders/:id is already changed by changes.0 (rename); ' +
        'two changes of one field contradict',
    ]);
    expect(
      problems(
        withChanges([rename('user_id', 'customer_id'), { resource: '/orders/:id', op: 'remove', field: 'user_id' }]),
      ),
    ).toEqual([
      'versions.0.changes.1.field: version 1: "user_id" on /orders/:id is already changed by changes.0 (rename); ' +
        'two changes of one field contradict',
    ]);
  });

  it('refuses two fields left under one name in the successor', () => {
    expect(
      problems(
        withChanges([rename('user_id', 'customer_id'), { resource: '/orders/:id', op: 'add', field: 'customer_id' }]),
      ),
    ).toEqual([
      'versions.0.changes.1.field: version 1: changes.0 already leaves a field named "customer_id" on /orders/:id ' +
        'in the successor',
    ]);
  });

  it('takes a map and a rename of one field together, and the same field on two resources apart', () => {
    const map = { resource: '/orders/:id', op: 'map', field: 'status', values: { active: 'enabled' } };
    expect(problems(withChanges([map, rename('status', 'state')]))).toEqual([]);
    const twoResources = [
      rename('user_id', 'customer_id'),
      { ...rename('user_id', 'customer_id'), resource: '/orders' },
    ];
    expect(problems(withChanges(twoResources, ['/orders/:id', '/orders', '/openapi.json']))).toEqual([]);
  });

  it('refuses a map that is not one-to-one, naming the value', () => {
    const map = {
      resource: '/orders/:id',
      op: 'map',
      field: 'status',
      values: { active: 'enabled', on: 'enabled', off: 'disabled' },
    };
    expect(problems(withChanges([map]))).toEqual([
      'versions.0.changes.0.values.on: version 1: "on" and "active" both map to "enabled"; a map must be one-to-one',
    ]);
  });

  it('refuses a rename out of its object and a name change of array items', () => {
    expect(problems(withChanges([rename('items[].user_id', 'customer_id')]))).toEqual([
      'versions.0.changes.0.to: version 1: "customer_id" must name a field in the same object as "items[].user_id"',
    ]);
    expect(problems(withChanges([rename('items[].user_id', 'items[].customer_id')]))).toEqual([]);
    expect(problems(withChanges([{ resource: '/orders/:id', op: 'remove', field: 'tags[]' }]))).toEqual([
      'versions.0.changes.0.field: version 1: remove names a field, not the items of an array ("tags[]")',
    ]);
  });

  it('refuses successors with changes that come back round, which would be followed forever', () => {
    const file = {
      default_version: 3,
      versions: [
        { ...v1, successor: 2, changes: [rename('a', 'b')] },
        { ...v1, version: 2, successor: 1, changes: [rename('b', 'a')] },
        { version: 3, status: 'current' },
      ],
    };
    expect(problems(file)).toEqual([
      'versions.0.changes: version 1: the successors of versions with changes come back to version 1; a chain must ' +
        'end at a version without changes',
      'versions.1.changes: version 2: the successors of versions with changes come back to version 2; a chain must ' +
        'end at a version without changes',
    ]);
  });
});
