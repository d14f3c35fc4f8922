import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcessStack, type ProcessStack } from './process-stack.js';
import { addResource, followVersion3, kubernetesSync, openapiUpdate, version3ClockStart } from './recipes.js';
import { copyRepository } from './repository-copy.js';

/**
 * docs/architecture.md's "Adding a resource" and "Adding a version 3" on one copy of the repository, in either
 * order, each followed as a whole with its commands: the resource is served in every version the backend serves,
 * so after both the backend serves invoices and orders in version 3 only, and the gateway presents version 2 and
 * version 1 of both from it. The two recipes checked alone are adding-a-resource.test.ts and
 * adding-version-3.test.ts.
 */

const V1_INVOICE = { id: 'inv-1001', order_id: 'ord-1001', amount: 19.99 };
const V3_INVOICE = { id: 'inv-1001', order_id: 'ord-1001', amount_cents: 1999, currency: 'EUR' };
const V1_ORDER = { id: 'ord-1001', user_id: 'user-1', total: 19.99 };
const V2_ORDER = { id: 'ord-1001', customer_id: 'user-1', total_cents: 1999, currency: 'EUR' };
const V3_ORDER = { data: { id: 'ord-1001', customer: { id: 'user-1' }, amount_cents: 1999, currency: 'EUR' } };

async function followResource(copy: string): Promise<string[]> {
  addResource(copy);
  return [await openapiUpdate(copy), await kubernetesSync(copy)];
}

async function followVersion3Recipe(copy: string): Promise<string[]> {
  const { firstUpdate, secondUpdate } = await followVersion3(copy);
  return [firstUpdate, secondUpdate, await kubernetesSync(copy)];
}

const ORDERS = {
  'a resource, then a version 3': [followResource, followVersion3Recipe],
  'a version 3, then a resource': [followVersion3Recipe, followResource],
} as const;

describe.each(Object.entries(ORDERS))('docs/architecture.md: %s', (_, [first, second]) => {
  let copy: string;
  let printed: string[];
  let stack: ProcessStack;

  beforeAll(async () => {
    copy = copyRepository('both-recipes-', ['deploy']);
    printed = [...(await first(copy)), ...(await second(copy))];
    stack = await startProcessStack({ root: copy, gatewayEnv: { GATEWAY_CLOCK_START: version3ClockStart() } });
  }, 600_000);

  afterAll(async () => {
    await stack?.stop();
    if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
  });

  it('runs every command of both sections without a breaking difference, and the last finds nothing to do', () => {
    for (const output of printed) expect(output).not.toContain('BREAKING');
    expect(printed.filter((output) => output.startsWith('Snapshots are up to date.'))).not.toHaveLength(0);
  });

  it('documents the invoices and the orders in every version: v3 from the backend, v2 and v1 derived', () => {
    for (const version of [1, 2, 3]) {
      const document = JSON.parse(readFileSync(join(copy, `openapi/v${version}.json`), 'utf8')) as {
        paths: Record<string, unknown>;
      };
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining([
          `/v${version}/orders/{id}`,
          `/api/v${version}/orders/{id}`,
          `/v${version}/invoices/{id}`,
          `/api/v${version}/invoices/{id}`,
        ]),
      );
    }
  });

  it('leaves a backend that serves both resources in version 3 only', async () => {
    for (const path of ['/v2/invoices/inv-1001', '/v2/orders/ord-1001']) {
      expect((await fetch(`${stack.backend.apiUrl}${path}`)).status, path).toBe(404);
    }
    expect(await (await fetch(`${stack.backend.apiUrl}/v3/invoices/inv-1001`)).json()).toEqual(V3_INVOICE);
  });

  it.each([
    ['/v3/invoices/inv-1001', '3', V3_INVOICE],
    ['/v2/invoices/inv-1001', '2', V3_INVOICE],
    ['/api/v2/invoices/inv-1001', '2', V3_INVOICE],
    ['/v1/invoices/inv-1001', '1', V1_INVOICE],
    ['/v3/orders/ord-1001', '3', V3_ORDER],
    ['/v2/orders/ord-1001', '2', V2_ORDER],
    ['/v1/orders/ord-1001', '1', V1_ORDER],
  ])('GET %s answers version %s', async (path, version, body) => {
    const res = await fetch(`${stack.gatewayUrl}${path}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(body);
    expect(res.headers.get('api-version')).toBe(version);
    expect(res.headers.get('deprecation')).toBe(version === '3' ? null : 'true');
  });

  it('answers an unknown invoice with the backend’s 404 in every version', async () => {
    for (const version of [1, 2, 3]) {
      const res = await fetch(`${stack.gatewayUrl}/v${version}/invoices/inv-9999`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'invoice not found', code: 404 });
    }
  });
});
