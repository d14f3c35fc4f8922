/**
 * The shipped policy keeps the README's curls true for years: this fails a year before any shipped date would make
 * one of them false, naming the date to move, so a date is moved on a working day and never breaks a start or an
 * example (docs/policy-file.md#the-policy-file). It is the one test meant to depend on today's date; with v1's sunset
 * shipped on 2030-01-01 it starts failing on 2029-01-01, so it still passes with the clock two years ahead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { readPolicyFile, versionPolicyFileSchema } from '../../gateway/src/versions/policy-file.js';
import { curlExamples, firstBrokenExample } from './shipped-dates.js';

const YEAR_MS = 365 * 86_400_000;
const iso = (epochMs: number): string => new Date(epochMs).toISOString();

/** Every copy of the policy the repository ships: the file, and what Kubernetes and the benchmarks read. */
const SHIPPED = [
  'ops/versions.json',
  'deploy/kubernetes/base/policy/versions.json',
  'bench/versions-every-scheme.json',
];

const examples = curlExamples(readFileSync(join(repoRoot, 'README.md'), 'utf8'));

/** The failure a reader gets, or undefined while every example holds for more than a year from `nowMs`. */
function warning(path: string, nowMs: number): string | undefined {
  const broken = firstBrokenExample(readPolicyFile(join(repoRoot, path)).file, examples, nowMs);
  if (broken === undefined || broken.at - nowMs > YEAR_MS) return undefined;
  return (
    `${path}: ${broken.date} (${iso(broken.at)}) makes the README's \`${broken.example}\` false: ${broken.why}; ` +
    'move it at least two years ahead'
  );
}

describe("the README's curls", () => {
  it('are read as what they promise: v1 with its deprecation headers, v2 by header', () => {
    expect(examples.map(({ pathVersion, header, phase }) => ({ pathVersion, header, phase }))).toEqual([
      { pathVersion: '1', header: undefined, phase: 'deprecated' },
      { pathVersion: undefined, header: '2', phase: 'current' },
    ]);
  });

  it.each(SHIPPED)('stay true under %s for at least a year from now', (path) => {
    expect(warning(path, Date.now())).toBeUndefined();
  });
});

describe('the guard', () => {
  const policy = (v1: Record<string, unknown>) =>
    versionPolicyFileSchema.parse({
      default_version: 2,
      versions: [
        { version: 1, status: 'deprecated', announced: '2026-06-01', successor: 2, ...v1 },
        { version: 2, status: 'current' },
      ],
    });
  const at = (text: string) => Date.parse(text);

  it('names the sunset that ends the v1 example, from the instant it comes due', () => {
    const file = policy({ sunset: '2030-01-01T00:00:00Z' });
    expect(firstBrokenExample(file, examples, at('2029-01-01T00:00:00Z'))).toEqual({
      at: at('2030-01-01T00:00:00Z'),
      example: examples[0]?.line,
      why: 'it would be answered 410 version_removed',
      date: 'versions.0.sunset',
    });
  });

  it('names a brownout window, a key requirement, and a date already passed', () => {
    const now = at('2027-03-01T00:00:00Z');
    const brownout = policy({
      sunset: '2030-01-01T00:00:00Z',
      brownouts: [{ start: '2027-05-01T10:00:00Z', end: '2027-05-01T11:00:00Z' }],
    });
    expect(firstBrokenExample(brownout, examples, now)).toMatchObject({
      date: 'versions.0.brownouts.0.start',
      why: 'it would be answered 410 version_brownout',
    });
    const keys = policy({ sunset: '2030-01-01T00:00:00Z', consumer_key: { required_from: '2027-06-01' } });
    expect(firstBrokenExample(keys, examples, now)).toMatchObject({
      date: 'versions.0.consumer_key.required_from',
      why: 'it would need an API key',
    });
    const passed = policy({ sunset: '2027-01-01T00:00:00Z' });
    expect(firstBrokenExample(passed, examples, now)).toMatchObject({ at: now, date: 'the dates before now' });
  });
});
