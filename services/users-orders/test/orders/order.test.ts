import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@version-router/platform/config';
import { orderSchema } from '../../src/orders/order.js';
import { seedFiles } from '../../src/resources/seeds.js';

describe("the orders' seed file (ORDERS_FILE)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'orders-'));
  /** The orders as the running backend reads them, from `path`. */
  const readOrdersFile = (path: string) => seedFiles({ seedDir: dir, ordersFile: path }).read('orders', orderSchema);
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('loads the shipped demo file: ord-1001..ord-1010', () => {
    const orders = readOrdersFile('ops/seed/orders.json');
    expect(orders.map((order) => order.id)).toEqual(Array.from({ length: 10 }, (_, i) => `ord-${1001 + i}`));
    expect(orders.find((order) => order.id === 'ord-1001')).toEqual({
      id: 'ord-1001',
      customer_id: 'user-1',
      total_cents: 1999,
      currency: 'EUR',
    });
  });

  it.each([
    ['missing', join(dir, 'absent.json'), /^ORDERS_FILE: cannot read .*absent\.json \(ENOENT\)$/],
    ['not JSON', file('bad.json', '[{'), /^ORDERS_FILE: .* is not valid JSON/],
    ['not an array', file('object.json', '{}'), /^ORDERS_FILE: .* is invalid/],
    [
      'fractional cents',
      file('cents.json', '[{"id":"o","customer_id":"c","total_cents":1.5,"currency":"EUR"}]'),
      /^ORDERS_FILE: .* is invalid at 0\.total_cents/,
    ],
    [
      'missing currency',
      file('currency.json', '[{"id":"o","customer_id":"c","total_cents":1}]'),
      /^ORDERS_FILE: .* is invalid at 0\.currency/,
    ],
    [
      'an unknown field',
      file('extra.json', '[{"id":"o","customer_id":"c","total_cents":1,"currency":"EUR","user_id":"c"}]'),
      /^ORDERS_FILE: .* is invalid/,
    ],
    [
      'duplicate ids',
      file(
        'dupes.json',
        '[{"id":"o","customer_id":"c","total_cents":1,"currency":"EUR"},{"id":"o","customer_id":"d","total_cents":2,"currency":"EUR"}]',
      ),
      /^ORDERS_FILE: .* is invalid at 1\.id: duplicate id "o"$/,
    ],
  ])('refuses a %s file with a ConfigError naming ORDERS_FILE', (_what, path, message) => {
    expect(() => readOrdersFile(path)).toThrow(ConfigError);
    expect(() => readOrdersFile(path)).toThrow(message);
  });
});
