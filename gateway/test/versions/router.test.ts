import { describe, expect, it } from 'vitest';
import { createResourceRouter, successorPath } from '../../src/versions/router.js';
import { policyFrom } from '../support/helpers.js';

// The resources of a policy matched by path, with the versions that have each, and the successor Link of a
// resource a `path` change renamed.

const policy = policyFrom({
  default_version: 2,
  schemes: ['path', 'header'],
  resources: [{ path: '/clients/:id', versions: [1] }, { path: '/users/:id', versions: [2] }, '/orders/:id'],
  versions: [
    {
      version: 1,
      status: 'deprecated',
      announced: '2026-06-01',
      sunset: '2027-01-01T00:00:00Z',
      successor: 2,
      changes: [{ resource: '/clients/:id', op: 'path', to: '/users/:id' }],
    },
    { version: 2, status: 'current' },
  ],
});
const router = createResourceRouter(policy.resources, policy.versions, policy.schemes);

describe('the resource router', () => {
  it('matches every form of every resource, and knows which versions have it', () => {
    const clients = router.match('/v1/clients/u-1');
    expect([clients?.route.template, clients?.versionLabel]).toEqual(['/clients/:id', '1']);
    expect([clients?.route.servedIn(1), clients?.route.servedIn(2)]).toEqual([true, false]);
    const users = router.match('/users/u-1');
    expect([users?.route.template, users?.route.form, users?.route.servedIn(1), users?.route.servedIn(2)]).toEqual([
      '/users/:id',
      'header',
      false,
      true,
    ]);
    expect([1, 2].map((version) => router.match('/api/v2/orders/o')?.route.servedIn(version))).toEqual([true, true]);
  });

  it("links a renamed resource's successor at the path the successor serves it", () => {
    const path = '/api/v1/clients/u-1';
    expect(successorPath(router.match(path) as NonNullable<ReturnType<typeof router.match>>, path, 1, 2)).toBe(
      '/api/v2/users/u-1',
    );
    const bare = '/clients/u%201';
    expect(successorPath(router.match(bare) as NonNullable<ReturnType<typeof router.match>>, bare, 1, 2)).toBe(
      '/v2/users/u%201',
    );
    const orders = '/v1/orders/o-1';
    expect(successorPath(router.match(orders) as NonNullable<ReturnType<typeof router.match>>, orders, 1, 2)).toBe(
      '/v2/orders/o-1',
    );
  });
});
