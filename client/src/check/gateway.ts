/** What the CLI reads from the gateway (docs/behaviour.md#each-consumers-deprecation-report, #discovery). */

export interface BreakingChange {
  change: string;
  kind: string;
  name: string;
}

export interface CalledOperation {
  operation: string;
  /** The call as the consumer made it (`GET /orders/{id} with API-Version: 1`); absent from older gateways. */
  call?: string;
  /** What to send for the successor in the same form (`GET /orders/{id} with API-Version: 2`); null: none. */
  instead?: string | null;
  requests: number;
  last_seen: string;
  breaking_changes: BreakingChange[];
}

export interface CalledVersion {
  version: number;
  phase: 'deprecated' | 'removed';
  sunset: string;
  successor: number | null;
  changes: string;
  operations: CalledOperation[];
}

export interface DeprecationsAnswer {
  consumer: string;
  versions: CalledVersion[];
}

export interface Brownout {
  start: string;
  end: string;
}

/** The check could not be made: its one-line reason. */
export class CheckError extends Error {}

const TIMEOUT_MS = 15_000;

async function getJson(
  fetchFn: typeof fetch,
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetchFn(url, {
      headers: { accept: 'application/json', ...headers },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CheckError(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    throw new CheckError(`GET ${url} answered ${response.status} without JSON`);
  }
}

/** `{"error": "...", "details": "..."}`, the gateway's error envelope, as one phrase. */
function errorText(body: unknown): string {
  const { error, details } = (body ?? {}) as { error?: unknown; details?: unknown };
  return [error, details].filter((part) => typeof part === 'string').join(': ');
}

const isString = (value: unknown): value is string => typeof value === 'string';

function isDeprecationsAnswer(body: unknown): body is DeprecationsAnswer {
  const answer = body as DeprecationsAnswer | null;
  return (
    typeof answer === 'object' &&
    answer !== null &&
    isString(answer.consumer) &&
    Array.isArray(answer.versions) &&
    answer.versions.every(
      (version) =>
        Number.isInteger(version.version) &&
        isString(version.sunset) &&
        isString(version.changes) &&
        (version.phase === 'deprecated' || version.phase === 'removed') &&
        Array.isArray(version.operations) &&
        version.operations.every(
          (operation) =>
            isString(operation.operation) &&
            (operation.call === undefined || isString(operation.call)) &&
            (operation.instead === undefined || operation.instead === null || isString(operation.instead)) &&
            Array.isArray(operation.breaking_changes),
        ),
    )
  );
}

/** The consumer's report: `GET /deprecations` with its key. A refused key and any answer but 200 are a CheckError. */
export async function readDeprecations(
  fetchFn: typeof fetch,
  base: string,
  apiKey: string,
): Promise<DeprecationsAnswer> {
  const url = `${base}/deprecations`;
  const { status, body } = await getJson(fetchFn, url, { 'api-key': apiKey });
  if (status === 401) throw new CheckError(`the gateway refused the key in API_KEY (401 ${errorText(body)})`);
  if (status !== 200) throw new CheckError(`GET ${url} answered ${status} ${errorText(body)}`.trimEnd());
  if (!isDeprecationsAnswer(body)) throw new CheckError(`GET ${url} answered JSON that is not a deprecation report`);
  return body;
}

/** Each version's brownout windows: `GET /versions`, public. */
export async function readBrownouts(fetchFn: typeof fetch, base: string): Promise<Map<number, Brownout[]>> {
  const url = `${base}/versions`;
  const { status, body } = await getJson(fetchFn, url, {});
  const versions = (body as { versions?: unknown } | null)?.versions;
  if (status !== 200 || !Array.isArray(versions))
    throw new CheckError(`GET ${url} answered ${status} ${errorText(body)}`.trimEnd());
  const brownouts = new Map<number, Brownout[]>();
  for (const entry of versions as { version?: unknown; brownouts?: unknown }[]) {
    if (typeof entry.version !== 'number' || !Array.isArray(entry.brownouts)) continue;
    brownouts.set(
      entry.version,
      (entry.brownouts as Brownout[]).filter((window) => isString(window.start) && isString(window.end)),
    );
  }
  return brownouts;
}
