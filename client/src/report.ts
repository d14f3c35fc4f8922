import { successorLink, sunsetDate, versionNumber } from './headers.js';
import { pathShape, pathVersion } from './shape.js';

/** What a consumer is told, once per operation, about a deprecated version it calls. */
export interface DeprecationReport {
  /** The request's method, upper case. */
  method: string;
  /** The URL of the first request of this operation that was answered as deprecated. */
  url: string;
  /** The method and the path with its ids collapsed, the operation this report stands for: `GET /v1/orders/{id}`. */
  operation: string;
  /** The deprecated version that answered, or null when neither the answer nor the request names one. */
  version: number | null;
  /** When the version stops being served (`Sunset`), or null when the answer gives no date. */
  sunset: Date | null;
  /** The same resource in the successor version (`Link: <…>; rel="successor-version"`), an absolute URL, or null. */
  successor: string | null;
  /** The version's migration guide (the `changes` link of `GET /versions`), an absolute URL, or null when unknown. */
  changes: string | null;
  /**
   * True when the version is gone: the answer was 410 Gone with a `Sunset` and no `Deprecation` (a removed
   * version's answer; a brownout's 410 carries `Deprecation`, and its version comes back). Reported apart from the
   * same operation's deprecation.
   */
  removed: boolean;
}

export type OnDeprecation = (report: DeprecationReport) => void;

export interface DeprecationOptions {
  /** Told once per method, path shape and version; by default one `console.warn` line. */
  onDeprecation?: OnDeprecation;
  /** The fetch that reads `GET /versions` for the migration guides (and, for createFetch, sends the requests). */
  fetch?: typeof fetch;
}

/**
 * Whether an answer tells of a deprecated or removed version: it carries `Deprecation`, or it is a 410 with a `Sunset`
 * (a removed version's answer names its sunset but is no longer deprecated).
 */
export const tellsOfDeprecation = (status: number, deprecation: boolean, sunset: boolean): boolean =>
  deprecation || (status === 410 && sunset);

/** An answer that tellsOfDeprecation, as createFetch and the interceptor read it: its headers' values. */
export interface DeprecatedAnswer {
  method: string;
  url: string;
  /** A 410 without `Deprecation`: the version is removed. */
  removed: boolean;
  /** The answer's `API-Version`. */
  answerVersion: string | null;
  /** The request's `API-Version`; read only when neither the answer nor the path names a version. */
  requestVersion: () => string | null;
  sunset: string | null;
  link: string | null;
}

/**
 * Operations remembered as reported. Past this many, the oldest is forgotten (and would be reported again if
 * called again): memory stays bounded whatever paths a client calls.
 */
const MAX_REMEMBERED = 1_000;
const VERSIONS_TIMEOUT_MS = 10_000;

/** One line: the operation, the version, the sunset, and where to go. */
export function describeDeprecation(report: DeprecationReport): string {
  const state = report.removed ? 'removed' : 'deprecated';
  const version = report.version === null ? `a ${state} API version` : `${state} API version ${report.version}`;
  const parts = [`${report.operation} calls ${version} (${report.url})`];
  if (report.removed) parts.push('answered 410 Gone');
  if (report.sunset !== null) parts.push(`sunset ${report.sunset.toISOString()}`);
  if (report.successor !== null) parts.push(`successor ${report.successor}`);
  if (report.changes !== null) parts.push(`migration guide ${report.changes}`);
  return `version-router: ${parts.join('; ')}`;
}

const warn: OnDeprecation = (report) => {
  // The default a consumer asked for by passing no onDeprecation: one line in its own log.
  // eslint-disable-next-line no-console
  console.warn(describeDeprecation(report));
};

/** `GET /versions` of one gateway: each version's migration guide as an absolute URL. */
async function readGuides(fetchFn: typeof fetch, origin: string): Promise<Map<number, string>> {
  const response = await fetchFn(`${origin}/versions`, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(VERSIONS_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`GET /versions answered ${response.status}`);
  const body = (await response.json()) as { versions?: unknown };
  const guides = new Map<number, string>();
  for (const entry of Array.isArray(body.versions) ? (body.versions as unknown[]) : []) {
    const { version, changes } = (entry ?? {}) as { version?: unknown; changes?: unknown };
    if (typeof version === 'number' && typeof changes === 'string') guides.set(version, new URL(changes, origin).href);
  }
  return guides;
}

/**
 * Reports each deprecated operation once: the bookkeeping createFetch and the interceptor share. The guide URLs are
 * read from the gateway's `GET /versions` once per gateway, when its first deprecation is reported; a failed read
 * leaves `changes` null and is tried again with the next new operation (never per request).
 */
export function createDeprecationReporter({
  onDeprecation = warn,
  fetch: fetchFn,
}: DeprecationOptions): (answer: DeprecatedAnswer) => void {
  const reported = new Set<string>();
  const guidesByOrigin = new Map<string, Promise<Map<number, string>>>();

  const guideOf = async (origin: string, version: number | null): Promise<string | null> => {
    if (version === null) return null;
    let guides = guidesByOrigin.get(origin);
    if (guides === undefined) {
      guides = readGuides(fetchFn ?? globalThis.fetch, origin);
      guidesByOrigin.set(origin, guides);
    }
    try {
      return (await guides).get(version) ?? null;
    } catch {
      guidesByOrigin.delete(origin);
      return null;
    }
  };

  return ({ method, url, removed, answerVersion, requestVersion, sunset, link }) => {
    // The origin and path by hand: a URL parse costs more than the rest of a known operation's work.
    if (!/^https?:\/\//i.test(url)) return;
    const slash = url.indexOf('/', url.indexOf('://') + 3);
    const origin = slash === -1 ? url : url.slice(0, slash);
    const path = slash === -1 ? '/' : url.slice(slash);
    // The version that answered (a proxied answer names it), else the one the path or the request named (a
    // brownout's 410 is the gateway's own and names none).
    const version = versionNumber(answerVersion) ?? pathVersion(path) ?? versionNumber(requestVersion());
    const operation = `${method} ${pathShape(path)}`;
    const key = `${origin} ${operation} ${version ?? ''}${removed ? ' removed' : ''}`;
    if (reported.has(key)) return;
    if (reported.size >= MAX_REMEMBERED) reported.delete(reported.values().next().value as string);
    reported.add(key);
    const report = { method, url, operation, version, sunset: sunsetDate(sunset), successor: successorLink(link, url) };
    void guideOf(origin, version).then((changes) => {
      try {
        onDeprecation({ ...report, changes, removed });
      } catch (err) {
        // A failing callback must not fail the consumer's request or crash its process; Node prints the warning.
        process.emitWarning(err instanceof Error ? err : new Error(String(err)));
      }
    });
  };
}
