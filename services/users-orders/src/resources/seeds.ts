import { join } from 'node:path';
import { z } from 'zod';
import { readJsonFile } from '@version-router/platform/config';

/** One record of a read-only resource: an object with an id, unique in its seed file. */
type RecordSchema = z.ZodType<{ id: string }>;

/** A seed file: a JSON array of one resource's records, no two with the same id. */
function seedFileSchema<Schema extends RecordSchema>(record: Schema) {
  return z.array(record).superRefine((records, ctx) => {
    const seen = new Set<string>();
    records.forEach(({ id }, index) => {
      if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `duplicate id "${id}"` });
      seen.add(id);
    });
  });
}

/**
 * The records the backend's read-only resources serve, read once while the app is built: each resource asks
 * for its own by name, with the schema of its records, so a new resource needs no option and no variable.
 */
export interface Seeds {
  read<Schema extends RecordSchema>(resource: string, record: Schema): z.output<Schema>[];
}

/**
 * The running backend's seed files: `<SEED_DIR>/<resource>.json`, except the orders, which ORDERS_FILE names
 * (its default is `<SEED_DIR>/orders.json`). A file that is missing, not JSON or not valid is a ConfigError
 * naming that variable, the file and the JSON path of the problem, so the process stops with one line.
 */
export function seedFiles({ seedDir, ordersFile }: { seedDir: string; ordersFile: string }): Seeds {
  return {
    read: (resource, record) =>
      resource === 'orders'
        ? readJsonFile('ORDERS_FILE', ordersFile, seedFileSchema(record))
        : readJsonFile('SEED_DIR', join(seedDir, `${resource}.json`), seedFileSchema(record)),
  };
}

/** Records given in code (tests, the OpenAPI writer); a resource not listed has none. */
export function seedRecords(records: Readonly<Record<string, readonly unknown[]>>): Seeds {
  return { read: (resource, record) => seedFileSchema(record).parse(records[resource] ?? []) };
}
