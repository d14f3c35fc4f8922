import { z } from 'zod';

/**
 * `compare` on a version entry (docs/declared-versions.md#comparing-a-declaration-with-the-code-it-replaces): the version is
 * served by the backend's own route, and a share of its GET and HEAD answers is compared with its successor's
 * answer translated back by the declarations.
 */

/** A dotted field path as the declarations write them (`updated_at`, `lines[].updated_at`). */
const ignoredPath = z
  .string()
  .regex(/^[A-Za-z_][\w-]*(\[\])?(\.[A-Za-z_][\w-]*(\[\])?)*$/, 'must be a dotted field path (a.b, items[].id)');

/** The successor's answer is awaited at most this long unless `timeout_ms` says otherwise. */
const DEFAULT_TIMEOUT_MS = 2_000;
/** Comparisons of one version under way at once unless `max_in_flight` says otherwise; more are skipped. */
const DEFAULT_MAX_IN_FLIGHT = 16;

export const compareSettings = z.strictObject({
  /** The share of the version's GET and HEAD requests compared: above 0, at most 1. */
  sample: z
    .number({ error: 'must be a number above 0 and at most 1' })
    .gt(0, 'must be above 0')
    .max(1, 'must be at most 1'),
  /** Fields left out of the comparison (a timestamp that differs between two reads of one record). */
  ignore: z.array(ignoredPath).default([]),
  /** Whether `GET /versions/{n}/comparison` shows the values of a difference's example (else only their types). */
  show_values: z.boolean({ error: 'must be true or false' }).default(false),
  /** How long the successor's answer may take, whole; past it the comparison counts as an error. */
  timeout_ms: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(1, 'must be at least 1')
    .max(60_000, 'must be at most 60000')
    .default(DEFAULT_TIMEOUT_MS),
  /** Comparisons of this version under way at once on a replica; a sampled request past it is skipped. */
  max_in_flight: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(1_000, 'must be at most 1000')
    .default(DEFAULT_MAX_IN_FLIGHT),
});

export type CompareSettings = z.output<typeof compareSettings>;

/** What the rule needs of a version entry. */
interface ComparedEntry {
  readonly successor?: number | undefined;
  readonly changes?: readonly unknown[] | undefined;
  readonly compare?: CompareSettings | undefined;
}

/** A comparison needs declarations to translate the successor's answer by: `changes`, and so a successor. */
export function checkCompare(
  entry: ComparedEntry,
  fail: (message: string, ...path: (string | number)[]) => void,
): void {
  if (entry.compare === undefined) return;
  if (entry.changes === undefined || entry.changes.length === 0)
    fail(
      "compare needs changes: it compares the backend's own answer with the successor's translated by them",
      'compare',
    );
}
