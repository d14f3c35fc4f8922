/**
 * When a shipped policy's dates stop the README's curls from answering as the README says: each curl of a versioned
 * resource is read as what it promises (`# v1 + Deprecation/Sunset/Link`: version 1 served with its deprecation
 * headers; otherwise the version served as current), and the policy is asked, through the gateway's own
 * resolution, at now and at each later instant its answers change (an announcement, a sunset, a brownout edge, a
 * key requirement, closed_to_new).
 */
import { type PolicyFile } from '../../gateway/src/versions/policy-file.js';
import { readmeCurls } from '../support/readme-curls.js';
import { createVersionPolicy, type VersionAnswer } from '../../gateway/src/versions/policy.js';

/** One README curl of a versioned resource and what it promises. */
export interface CurlExample {
  /** The README line, as written. */
  line: string;
  /** The path's version, or undefined on a bare path. */
  pathVersion: string | undefined;
  /** The API-Version header's value, or undefined. */
  header: string | undefined;
  /** Served with Deprecation/Sunset/Link (deprecated), or as a current version. */
  phase: 'deprecated' | 'current';
}

/** The README's curls that name a version (by path or header) and what each promises; the others pass through. */
export function curlExamples(readme: string): CurlExample[] {
  return readmeCurls(readme).flatMap(({ line, path, headers, promise }): CurlExample[] => {
    if (promise === 'created') return [];
    const pathVersion = /^(?:\/api)?\/v(\d+)\//.exec(path)?.[1];
    const header = headers['API-Version'];
    return [{ line, pathVersion, header, phase: promise.deprecated ? 'deprecated' : 'current' }];
  });
}

/** Why the answer breaks the example's promise, or undefined when it keeps it. */
function broken(example: CurlExample, answer: VersionAnswer | undefined): string | undefined {
  if (answer === undefined) return 'the policy does not list its version';
  if (answer.failure !== null) return `it would be answered ${answer.failure.status} ${answer.failure.error}`;
  if (answer.keyRequired) return 'it would need an API key';
  if (answer.closedToNew !== null) return 'its version would be closed to new consumers';
  if (answer.phase !== example.phase) return `its version would be ${answer.phase}, not ${example.phase}`;
  return undefined;
}

/** Every instant the policy file names, with its JSON path: what a reader moves. */
function namedInstants(file: PolicyFile): { path: string; at: number }[] {
  return file.versions.flatMap((entry, index) => {
    const at = (key: string, ms: number | undefined) =>
      ms === undefined ? [] : [{ path: `versions.${index}.${key}`, at: ms }];
    const keyFrom = typeof entry.consumer_key === 'object' ? entry.consumer_key.required_from : undefined;
    return [
      ...at('announced', entry.announced),
      ...at('sunset', entry.sunset),
      ...at('closed_to_new', entry.closed_to_new),
      ...at('consumer_key.required_from', keyFrom),
      ...(entry.brownouts ?? []).flatMap((window, windowIndex) => at(`brownouts.${windowIndex}.start`, window.start)),
    ];
  });
}

/** The first instant from `nowMs` on at which an example is false under the policy, what breaks, and which date. */
export function firstBrokenExample(
  file: PolicyFile,
  examples: readonly CurlExample[],
  nowMs: number,
): { at: number; example: string; why: string; date: string } | undefined {
  const policy = createVersionPolicy(file);
  const named = namedInstants(file);
  const instants = [nowMs, ...named.map(({ at }) => at).filter((at) => at > nowMs)].sort((a, b) => a - b);
  for (const at of instants) {
    for (const example of examples) {
      const why = broken(example, policy.resolve(example.pathVersion, example.header, undefined, undefined, at));
      if (why === undefined) continue;
      const date = named.find((instant) => instant.at === at)?.path ?? 'the dates before now';
      return { at, example: example.line, why, date };
    }
  }
  return undefined;
}
