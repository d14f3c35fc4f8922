import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '@version-router/platform/config';
import { createLogger } from '@version-router/platform/logger';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { seedFiles, seedRecords } from '../../src/resources/seeds.js';

/** A resource of the tests' own: the mechanism knows no resource but the orders by name. */
const widgetSchema = z.strictObject({ id: z.string().min(1), size: z.int() });

describe('seedFiles: <SEED_DIR>/<resource>.json, the orders at ORDERS_FILE', () => {
  const seedDir = mkdtempSync(join(tmpdir(), 'seeds-'));
  writeFileSync(join(seedDir, 'widgets.json'), '[{"id":"w-1","size":3},{"id":"w-2","size":5}]');
  writeFileSync(join(seedDir, 'dupes.json'), '[{"id":"w-1","size":3},{"id":"w-1","size":5}]');
  writeFileSync(join(seedDir, 'bad.json'), '[{"id":"w-1","size":"large"}]');
  const seeds = seedFiles({ seedDir, ordersFile: join(seedDir, 'elsewhere.json') });

  it("reads a resource's records from its file in SEED_DIR", () => {
    expect(seeds.read('widgets', widgetSchema)).toEqual([
      { id: 'w-1', size: 3 },
      { id: 'w-2', size: 5 },
    ]);
  });

  it.each([
    ['gadgets', `SEED_DIR: cannot read ${join(seedDir, 'gadgets.json')} (ENOENT)`],
    ['dupes', `SEED_DIR: ${join(seedDir, 'dupes.json')} is invalid at 1.id: duplicate id "w-1"`],
    [
      'bad',
      `SEED_DIR: ${join(seedDir, 'bad.json')} is invalid at 0.size: Invalid input: expected number, received string`,
    ],
    ['orders', `ORDERS_FILE: cannot read ${join(seedDir, 'elsewhere.json')} (ENOENT)`],
  ])('refuses the %s seed with a ConfigError naming the variable that locates it', (resource, message) => {
    expect(() => seeds.read(resource, widgetSchema)).toThrow(new ConfigError(message));
  });
});

describe('seedRecords: records given in code', () => {
  it('checks them as a file is checked, and gives a resource it does not list no records', () => {
    const seeds = seedRecords({
      widgets: [{ id: 'w-1', size: 3 }],
      dupes: [
        { id: 'w-1', size: 3 },
        { id: 'w-1', size: 4 },
      ],
    });
    expect(seeds.read('widgets', widgetSchema)).toEqual([{ id: 'w-1', size: 3 }]);
    expect(seeds.read('gadgets', widgetSchema)).toEqual([]);
    expect(() => seeds.read('dupes', widgetSchema)).toThrow(
      expect.objectContaining({
        issues: [expect.objectContaining({ path: [1, 'id'], message: 'duplicate id "w-1"' })],
      }),
    );
  });
});

describe('the shipped seed files', () => {
  it(
    'hold a valid seed file for every resource the backend serves: the app builds from them with the default ' +
      'configuration',
    async () => {
      const app = await buildApp({
        logger: createLogger('silent', 'seeds-test'),
        clock: Date.now,
        seeds: seedFiles(loadConfig({})),
      });
      try {
        expect((await app.inject({ method: 'GET', url: '/v2/orders/ord-1001' })).statusCode).toBe(200);
      } finally {
        await app.close();
      }
    },
  );
});
