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

describe("the second edition's operations in the policy file", () => {
  const order = '/orders/:id';
  const change = (op: string, rest: Record<string, unknown>) => ({ resource: order, op, ...rest });

  it('accepts each of them, declared right', () => {
    const changes = [
      change('move', { field: 'customer_id', to: 'customer.id' }),
      change('move', { field: 'lines[].sku', to: 'lines[].product.sku' }),
      change('envelope', { field: 'data' }),
      change('envelope', { field: 'error', on: 'error' }),
      change('status', { from: 403, to: 401 }),
      change('header', { name: 'Total-Count', to: 'X-Total-Count' }),
      change('link', { field: 'next' }),
      change('link', { field: 'Link' }),
      change('rename', { field: 'details', to: 'message', on: 'error' }),
      change('module', { module: 'changes/split-name.mjs' }),
    ];
    expect(problems(withChanges(changes))).toEqual([]);
  });

  it('refuses a move out of its array items, into itself, or of array items', () => {
    expect(problems(withChanges([change('move', { field: 'lines[].sku', to: 'sku' })]))).toEqual([
      'versions.0.changes.0.to: version 1: "sku" must be inside the same array items as "lines[].sku" ("lines[]")',
    ]);
    expect(problems(withChanges([change('move', { field: 'a', to: 'a' })]))).toEqual([
      'versions.0.changes.0.to: version 1: "a" is where "a" already is',
    ]);
    expect(problems(withChanges([change('move', { field: 'a', to: 'a.b' })]))).toEqual([
      'versions.0.changes.0.to: version 1: "a.b" and "a" cannot hold one another',
    ]);
    expect(problems(withChanges([change('move', { field: 'tags[]', to: 'labels' })]))).toEqual([
      'versions.0.changes.0.field: version 1: move names fields, not the items of an array ("tags[]")',
    ]);
  });

  it('refuses a move whose parent another change renames, and two moves to one place', () => {
    expect(
      problems(
        withChanges([change('move', { field: 'customer_id', to: 'customer.id' }), rename('customer', 'client')]),
      ),
    ).toEqual([
      'versions.0.changes.1.field: version 1: "customer" is a parent of the field changes.0 moves; it cannot be ' +
        'changed (rename) too',
    ]);
    expect(
      problems(withChanges([change('move', { field: 'a', to: 'c.x' }), change('move', { field: 'b', to: 'c.x' })])),
    ).toEqual([
      'versions.0.changes.1.to: version 1: changes.0 already leaves a field named "c.x" on /orders/:id in the successor',
    ]);
  });

  it('refuses two envelopes of one body, two answers of one status, a status kept, on on a status', () => {
    expect(
      problems(withChanges([change('envelope', { field: 'data' }), change('envelope', { field: 'result' })])),
    ).toEqual(['versions.0.changes.1.op: version 1: changes.0 already wraps these bodies of /orders/:id']);
    expect(
      problems(withChanges([change('status', { from: 403, to: 401 }), change('status', { from: 403, to: 400 })])),
    ).toEqual(['versions.0.changes.1.from: version 1: changes.0 already answers status 403 of /orders/:id']);
    expect(problems(withChanges([change('status', { from: 404, to: 404 })]))).toEqual([
      'versions.0.changes.0.to: version 1: status 404 is the same in both versions',
    ]);
    expect(problems(withChanges([change('status', { from: 403, to: 1000 })]))).toEqual([
      'versions.0.changes.0.to: must be 100–599',
    ]);
    expect(problems(withChanges([change('status', { from: 403, to: 401, on: 'error' })]))).toEqual([
      'versions.0.changes.0: Unrecognized key: "on"',
    ]);
  });

  it('refuses renaming a header the gateway owns, one header twice, and a header into itself', () => {
    expect(problems(withChanges([change('header', { name: 'Total-Count', to: 'Link' })]))).toEqual([
      'versions.0.changes.0.to: version 1: Link is a header the gateway sets or reads itself; it cannot be renamed',
    ]);
    expect(problems(withChanges([change('header', { name: 'API-Version', to: 'X-Version' })]))).toEqual([
      'versions.0.changes.0.name: version 1: API-Version is a header the gateway sets or reads itself; it cannot be ' +
        'renamed',
    ]);
    expect(
      problems(
        withChanges([
          change('header', { name: 'Total-Count', to: 'X-Total' }),
          change('header', { name: 'total-count', to: 'X-Count' }),
        ]),
      ),
    ).toEqual(["versions.0.changes.1.name: version 1: changes.0 already renames the successor's header total-count"]);
    expect(problems(withChanges([change('header', { name: 'X-A', to: 'x-a' })]))).toEqual([
      'versions.0.changes.0.to: version 1: x-a is the same header in both versions',
    ]);
  });

  it('refuses a module that is no ES module file, and an `on` that is neither success nor error', () => {
    expect(problems(withChanges([change('module', { module: 'changes/split.ts' })]))).toEqual([
      'versions.0.changes.0.module: must be the path of an ES module file (.mjs or .js)',
    ]);
    expect(problems(withChanges([change('rename', { field: 'a', to: 'b', on: 'redirect' })]))).toEqual([
      'versions.0.changes.0.on: must be "success" or "error"',
    ]);
  });

  it('takes one change of a field in success bodies and another in error envelopes apart', () => {
    expect(
      problems(withChanges([rename('details', 'message'), change('remove', { field: 'details', on: 'error' })])),
    ).toEqual([]);
  });
});

describe('resources listed for some versions, and a path change', () => {
  const clients = (changes: unknown[], resources: unknown[]) => ({
    default_version: 2,
    resources,
    versions: [
      { ...v1, changes },
      { version: 2, status: 'current' },
    ],
  });
  const path = { resource: '/clients/:id', op: 'path', to: '/users/:id' };
  const listed = [{ path: '/clients/:id', versions: [1] }, { path: '/users/:id', versions: [2] }, '/openapi.json'];

  it('accepts an endpoint renamed: this version lists the old path, the successor the new one', () => {
    expect(problems(clients([path], listed))).toEqual([]);
  });

  it('refuses a version with a resource its successor does not serve, unless a path change says where', () => {
    expect(problems(clients([], listed))).toEqual([
      'versions.0.changes: version 1: resource "/clients/:id" is not listed for version 2, which serves version 1; ' +
        'a path change says where the successor serves it',
    ]);
  });

  it('refuses a path change to a resource the successor does not list, or with other parameters', () => {
    expect(problems(clients([{ ...path, to: '/people/:id' }], listed))).toEqual([
      'versions.0.changes.0.to: version 1: resource "/people/:id" is not listed in resources',
    ]);
    expect(
      problems(clients([{ ...path, to: '/people/:id' }], [...listed, { path: '/people/:id', versions: [1] }])),
    ).toContain('versions.0.changes.0.to: version 1: resource "/people/:id" is not listed for version 2');
    expect(
      problems(clients([{ ...path, to: '/people/:key' }], [...listed, { path: '/people/:key', versions: [2] }])),
    ).toEqual([
      'versions.0.changes.0.to: version 1: "/people/:key" must have the parameters of "/clients/:id" (id), not key',
    ]);
  });

  it('refuses two resources of a version served at one path of its successor', () => {
    expect(problems(clients([path], [...listed, '/users/:id']))).toContain(
      'versions.0.changes: version 1: resources "/clients/:id" and "/users/:id" would both be served at "/users/:id" ' +
        'by version 2',
    );
  });

  it('refuses a version the policy does not list, listed twice, and a change of a resource another version has', () => {
    const users = { path: '/users/:id', versions: [2] };
    expect(problems(clients([path], [{ path: '/clients/:id', versions: [1, 3] }, users]))).toEqual([
      'resources.0.versions.1: version 3 is not a listed version',
    ]);
    expect(problems(clients([path], [{ path: '/clients/:id', versions: [1, 1] }, users]))).toEqual([
      'resources.0.versions.1: version 1 is listed twice',
    ]);
    expect(problems(clients([{ ...rename('a', 'b'), resource: '/users/:id' }], listed))).toEqual([
      'versions.0.changes.0.resource: version 1: resource "/users/:id" is not listed for version 1',
      'versions.0.changes: version 1: resource "/clients/:id" is not listed for version 2, which serves version 1; ' +
        'a path change says where the successor serves it',
    ]);
  });

  it('refuses a template that is none, in either form', () => {
    expect(problems({ ...clients([], ['/orders/:id']), resources: [{ path: 'clients', versions: [1] }] })).toContain(
      'resources.0.path: must be a path starting with "/"',
    );
    expect(problems({ ...clients([], []), resources: [{ versions: [1] }] })).toEqual([
      'resources.0: must be a path template or {"path": <template>, "versions": [<version>, …]}',
    ]);
  });
});
