import type { VersionChange } from '../../src/versions/changes.js';

/** SPEC's version 1 of an order, declared as what changed to version 2 (as ops/versions.json declares it). */
export const V1_CHANGES: VersionChange[] = [
  {
    resource: '/orders/:id',
    op: 'rename',
    field: 'user_id',
    to: 'customer_id',
    description: 'The customer identifier under its old name.',
  },
  { resource: '/orders/:id', op: 'scale', field: 'total', to: 'total_cents', factor: 100 },
  { resource: '/orders/:id', op: 'add', field: 'currency' },
];
