/** What the CLI reads from the gateway (docs/consumers.md#each-consumers-deprecation-report, #discovery). */

export interface BreakingChange {
  change: string;
  kind: string;
  name: string;
  /** The field's name in the successor (renamed, converted), and the factor of a converted one. */
  to?: string;
  factor?: number;
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
  /** Nothing of the consumer's is on the version any more (its pin is elsewhere, no call since); absent from older gateways. */
  done?: boolean;
  operations: CalledOperation[];
}

export interface DeprecationsAnswer {
  consumer: string;
  /** The version the consumer's requests that name none are served; null: none; absent from older gateways. */
  pinned_version?: number | null;
  /** From when the calls are counted (the `since` asked, or the last pin move); absent from older gateways. */
  requests_since?: string;
  /** The gateway's clock at the report; absent from older gateways. */
  as_of?: string;
  versions: CalledVersion[];
}

export interface Brownout {
  start: string;
  end: string;
}

/** The check could not be made: its one-line reason. */
export class CheckError extends Error {}

/** How long one request to the gateway may take, its whole answer read. */
export const TIMEOUT_MS = 15_000;

/** Why a request failed, in a few words: Node's error code, else its cause's message, else its own. */
function reasonOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

const timedOut = (err: unknown): boolean => (err as Error | null)?.name === 'TimeoutError';

/**
 * GET `url` (with `query`, which the messages leave out) and its body parsed as JSON. Every way this fails is a
 * CheckError with one line: no connection, no answer or no whole body within `timeoutMs` (a stalled body), a body cut
 * off (a reset), a body that is not JSON.
 */
async function getJson(
  fetchFn: typeof fetch,
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
  query = '',
): Promise<{ status: number; body: unknown }> {
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetchFn(`${url}${query}`, { headers: { accept: 'application/json', ...headers }, signal });
  } catch (err) {
    throw new CheckError(`cannot reach ${url}: ${timedOut(err) ? `no answer within ${timeoutMs} ms` : reasonOf(err)}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (err) {
    const what = timedOut(err) ? `the body did not arrive whole within ${timeoutMs} ms` : `the body broke off`;
    throw new CheckError(`GET ${url} answered ${response.status}, but ${what} (${reasonOf(err)})`);
  }
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
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isDate = (value: unknown): value is string => isString(value) && !Number.isNaN(Date.parse(value));
const isVersion = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function isBreakingChange(change: unknown): change is BreakingChange {
  return (
    isObject(change) &&
    isString(change.change) &&
    isString(change.kind) &&
    isString(change.name) &&
    (change.to === undefined || isString(change.to)) &&
    (change.factor === undefined || typeof change.factor === 'number')
  );
}

function isCalledOperation(operation: unknown): operation is CalledOperation {
  return (
    isObject(operation) &&
    isString(operation.operation) &&
    (operation.call === undefined || isString(operation.call)) &&
    (operation.instead === undefined || operation.instead === null || isString(operation.instead)) &&
    Number.isSafeInteger(operation.requests) &&
    Array.isArray(operation.breaking_changes) &&
    operation.breaking_changes.every(isBreakingChange)
  );
}

function isCalledVersion(version: unknown): version is CalledVersion {
  return (
    isObject(version) &&
    isVersion(version.version) &&
    (version.phase === 'deprecated' || version.phase === 'removed') &&
    isDate(version.sunset) &&
    (version.successor === null || isVersion(version.successor)) &&
    isString(version.changes) &&
    (version.done === undefined || typeof version.done === 'boolean') &&
    Array.isArray(version.operations) &&
    version.operations.every(isCalledOperation)
  );
}

/** Everything the verdict and its formats read, checked: a report that fails here is no report, not a crash. */
function isDeprecationsAnswer(body: unknown): body is DeprecationsAnswer {
  return (
    isObject(body) &&
    isString(body.consumer) &&
    (body.pinned_version === undefined || body.pinned_version === null || isVersion(body.pinned_version)) &&
    (body.requests_since === undefined || isDate(body.requests_since)) &&
    (body.as_of === undefined || isDate(body.as_of)) &&
    Array.isArray(body.versions) &&
    body.versions.every(isCalledVersion)
  );
}

/**
 * The consumer's report of its calls since `since` (`GET /deprecations?since=` with its key), or over the gateway's
 * own default window (30 days back on its clock) without one. A refused key and any answer but 200 are a CheckError.
 */
export async function readDeprecations(
  fetchFn: typeof fetch,
  base: string,
  apiKey: string,
  since: Date | undefined,
  timeoutMs = TIMEOUT_MS,
): Promise<DeprecationsAnswer> {
  const url = `${base}/deprecations`;
  const query = since === undefined ? '' : `?since=${encodeURIComponent(since.toISOString())}`;
  const { status, body } = await getJson(fetchFn, url, { 'api-key': apiKey }, timeoutMs, query);
  if (status === 401) throw new CheckError(`the gateway refused the key in API_KEY (401 ${errorText(body)})`);
  if (status !== 200) throw new CheckError(`GET ${url} answered ${status} ${errorText(body)}`.trimEnd());
  if (!isDeprecationsAnswer(body)) throw new CheckError(`GET ${url} answered JSON that is not a deprecation report`);
  return body;
}

/** A version as `GET /versions` lists it: what the check reads of it. */
export interface ListedVersion {
  version: number;
  /** `current`, `deprecated` or `removed` (a later gateway may know more). */
  phase: string;
  /** ISO 8601; null without one. */
  sunset: string | null;
  brownouts: Brownout[];
}

function isListedVersion(entry: unknown): entry is ListedVersion {
  return (
    isObject(entry) &&
    isVersion(entry.version) &&
    isString(entry.phase) &&
    (entry.sunset === null || isDate(entry.sunset)) &&
    Array.isArray(entry.brownouts) &&
    entry.brownouts.every((window) => isObject(window) && isDate(window.start) && isDate(window.end))
  );
}

/** Every version the policy lists, with its phase and brownout windows: `GET /versions`, public. */
export async function readVersions(
  fetchFn: typeof fetch,
  base: string,
  timeoutMs = TIMEOUT_MS,
): Promise<Map<number, ListedVersion>> {
  const url = `${base}/versions`;
  const { status, body } = await getJson(fetchFn, url, {}, timeoutMs);
  if (status !== 200) throw new CheckError(`GET ${url} answered ${status} ${errorText(body)}`.trimEnd());
  const versions = isObject(body) ? body.versions : undefined;
  if (!Array.isArray(versions) || !versions.every(isListedVersion))
    throw new CheckError(`GET ${url} answered JSON that is not a version list`);
  return new Map(versions.map((entry) => [entry.version, entry]));
}

/** One change on the way, as `GET /consumer/upgrade-preview` lists it: what the preview's formats read of it. */
export interface PreviewChange {
  change: string;
  kind: string;
  name: string;
  to?: string;
  factor?: number;
  breaking: boolean;
  version: number;
  successor: number;
  operation: string;
  affects: boolean;
  calls: string[];
  fields_sent: string[];
}

/** One operation the consumer called on the version it would leave. */
export interface PreviewCall {
  operation: string;
  call: string;
  instead: string | null;
  requests: number;
  last_seen: string;
}

export interface UpgradePreviewAnswer {
  consumer: string;
  from: number;
  to: number;
  calls_since: string;
  verdict: 'safe' | 'review' | 'blocked';
  calls: PreviewCall[];
  changes: PreviewChange[];
  blocking: string[];
}

const VERDICTS: readonly unknown[] = ['safe', 'review', 'blocked'];

function isPreviewChange(change: unknown): change is PreviewChange {
  return (
    isBreakingChange(change) &&
    typeof (change as PreviewChange).breaking === 'boolean' &&
    isVersion((change as PreviewChange).version) &&
    isVersion((change as PreviewChange).successor) &&
    isString((change as PreviewChange).operation) &&
    typeof (change as PreviewChange).affects === 'boolean' &&
    Array.isArray((change as PreviewChange).calls) &&
    (change as PreviewChange).calls.every(isString) &&
    Array.isArray((change as PreviewChange).fields_sent) &&
    (change as PreviewChange).fields_sent.every(isString)
  );
}

function isPreviewCall(call: unknown): call is PreviewCall {
  return (
    isObject(call) &&
    isString(call.operation) &&
    isString(call.call) &&
    (call.instead === null || isString(call.instead)) &&
    Number.isSafeInteger(call.requests) &&
    isDate(call.last_seen)
  );
}

function isUpgradePreview(body: unknown): body is UpgradePreviewAnswer {
  return (
    isObject(body) &&
    isString(body.consumer) &&
    isVersion(body.from) &&
    isVersion(body.to) &&
    isDate(body.calls_since) &&
    VERDICTS.includes(body.verdict) &&
    Array.isArray(body.calls) &&
    body.calls.every(isPreviewCall) &&
    Array.isArray(body.changes) &&
    body.changes.every(isPreviewChange) &&
    Array.isArray(body.blocking) &&
    body.blocking.every(isString)
  );
}

/**
 * What moving the consumer's pin to `to` would change for its calls: `GET /consumer/upgrade-preview?to=` with its
 * key. A refused key and any answer but 200 (a version it cannot move to is a 422 naming those it can) are a
 * CheckError.
 */
export async function readUpgradePreview(
  fetchFn: typeof fetch,
  base: string,
  apiKey: string,
  to: number,
  timeoutMs = TIMEOUT_MS,
): Promise<UpgradePreviewAnswer> {
  const url = `${base}/consumer/upgrade-preview`;
  const { status, body } = await getJson(fetchFn, url, { 'api-key': apiKey }, timeoutMs, `?to=${to}`);
  if (status === 401) throw new CheckError(`the gateway refused the key in API_KEY (401 ${errorText(body)})`);
  if (status !== 200) throw new CheckError(`GET ${url} answered ${status} ${errorText(body)}`.trimEnd());
  if (!isUpgradePreview(body)) throw new CheckError(`GET ${url} answered JSON that is not an upgrade preview`);
  return body;
}
