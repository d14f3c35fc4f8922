import type { VersionChange } from '../../src/translation/changes.js';
import { compileTranslations, type CompiledStep, type RouteTranslation } from '../../src/translation/compile.js';

/** The orders resource, as the shipped policy lists it. */
export const ORDERS = '/orders/:id';

/** SPEC's version 1 of an order, declared as what changed to version 2 (as ops/versions.json declares it). */
export const ORDERS_V1_CHANGES: VersionChange[] = [
  {
    resource: ORDERS,
    op: 'rename',
    field: 'user_id',
    to: 'customer_id',
    description: 'The customer identifier under its old name.',
  },
  { resource: ORDERS, op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
  { resource: ORDERS, op: 'add', field: 'currency' },
];

/** A policy's resources as the tests write them: templates in every version, or with the versions that have them. */
type Resources = readonly (string | { path: string; versions: number[] })[];

const listed = (resources: Resources) =>
  resources.map((resource) =>
    typeof resource === 'string' ? { path: resource, versions: undefined } : { ...resource },
  );

/** The compiled steps from version 1 to version 2 declared by `changes` (oldest first: one). */
export function stepsOf(changes: VersionChange[], resources: Resources = [ORDERS, '/openapi.json']): CompiledStep[] {
  const compiled = compileTranslations({
    versions: [{ version: 1, successor: 2, changes }, { version: 2 }],
    resources: listed(resources),
  });
  return [...compiled.chain(1).steps];
}

/** Version 1's translation of `resource`, served by version 2 under `changes`. */
export function routeOf(
  changes: VersionChange[],
  resource = ORDERS,
  resources: Resources = [resource],
): RouteTranslation {
  const compiled = compileTranslations({
    versions: [{ version: 1, successor: 2, changes }, { version: 2 }],
    resources: listed(resources),
  });
  return compiled.versions.get(1)?.routes.get(resource) as RouteTranslation;
}
