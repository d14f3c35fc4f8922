import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '@version-router/platform/clock';
import type { VersionAnswer, VersionPolicy } from '../versions/policy.js';
import { POLICY_PROBLEM_RULES, type PolicyProblemRule } from '../versions/load-rules.js';
import { NOTICE_KINDS, type NoticeKind } from '../notices/milestones.js';
import { CHANNELS, NOTICE_RESULTS, type Channel, type NoticeResult } from '../notices/labels.js';

/** A refused translation as `translation_failures_total` counts it (the translated routes' own type fits it). */
interface TranslationFailureLabels {
  readonly version: number;
  readonly resource: string;
  readonly direction: string;
  readonly reason: string;
}

/** A comparison's result as `api_version_comparisons_total` counts it (comparison/records.ts makes them). */
type ComparisonResult = 'match' | 'differ' | 'error' | 'skipped';

/** Every metric the gateway adds to the shared HTTP ones; the names are an interface that ops/ queries. */
export interface GatewayMetrics {
  /** One answered request on a versioned resource, under its answer's labels. */
  countVersionedRequest(answer: VersionAnswer, statusCode: number): void;
  /** One policy reload (SIGHUP, POST /-/reload or the file watch) and its outcome. */
  countReload(ok: boolean): void;
  /** Authenticated requests the consumer ledger could not keep (its pending rows were at their bound). */
  countUsageDropped(requests: number): void;
  /**
   * One deprecation notice's outcome on this replica: sent, sent again after a stopped sender (resent), retried,
   * failed, skipped.
   */
  countNotice(milestone: NoticeKind, channel: Channel, result: NoticeResult): void;
  /** One body a version declared as changes did not translate, and why (docs/observability.md#metrics). */
  countTranslationFailure(failure: TranslationFailureLabels): void;
  /** One comparison of a compared version's answer with its successor's translated back, and its result. */
  countComparison(version: number, resource: string, result: ComparisonResult): void;
  /** Request field paths left unrecorded at one of their bounds. */
  countRequestFieldsDropped(count: number): void;
}

/** The requests of one `api_version_requests_total` series. */
interface RequestTally {
  readonly labels: Readonly<Record<'version' | 'deprecated' | 'selected_by' | 'status_code', string>>;
  requests: number;
}

export interface GatewayMetricsSources {
  /** The policy in force at scrape time (it changes on a reload). */
  policy: () => VersionPolicy;
  /** The short content hash of that policy's file. */
  policySha256: () => string;
  /** The moment-dependent rules the policy in force breaks now (policy-problems.ts). */
  policyProblems: () => ReadonlySet<PolicyProblemRule>;
  /** The bounded per-consumer counts of deprecated and removed versions (top-consumers.ts). */
  consumerSeries: () => readonly { version: number; consumer: string; requests: number }[];
  /** Whether the backend answers now: probed at each scrape for `backend_up`. */
  backendAnswers: () => Promise<boolean>;
  clock: Clock;
}

export function createGatewayMetrics(
  registry: Registry,
  { policy, policySha256, policyProblems, consumerSeries, backendAnswers, clock }: GatewayMetricsSources,
): GatewayMetrics {
  // Counted per request in plain integers and handed to prom-client at scrape time: prom-client checks and
  // hashes the labels on every inc, which costs each request CPU (bench/README.md#tuning-history-before--after).
  // One tally per label set, kept across reloads, so a series never goes down.
  const tallies = new Map<string, RequestTally>();
  new Counter({
    name: 'api_version_requests_total',
    help:
      'Requests on versioned resources, by API version (or "invalid"), deprecation, how the version was ' +
      'selected, and status code.',
    labelNames: ['version', 'deprecated', 'selected_by', 'status_code'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, requests } of tallies.values()) this.inc(labels, requests);
    },
  });
  // Gauges read the policy and the clock at scrape time, so a reload or a passing instant shows at once.
  new Gauge({
    name: 'api_version_sunset_timestamp_seconds',
    help: 'Sunset instant of each API version that has one, in Unix seconds.',
    labelNames: ['version'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { version, sunset } of policy().versions)
        if (sunset !== undefined) this.set({ version: String(version) }, sunset / 1000);
    },
  });
  new Gauge({
    name: 'api_version_brownout_active',
    help: '1 while an API version is in a scheduled brownout window (answered 410 version_brownout), else 0.',
    labelNames: ['version'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const current = policy();
      const now = clock();
      for (const entry of current.versions)
        this.set({ version: String(entry.version) }, current.brownoutAt(entry, now) === undefined ? 0 : 1);
    },
  });
  // The version that requests naming none get, and its phase now: alerts DefaultApiVersionDeprecated/Removed.
  new Gauge({
    name: 'api_version_default_info',
    help:
      'Always 1; version is default_version (what requests that name no version get) and phase its phase now: ' +
      'current, deprecated or removed.',
    labelNames: ['version', 'phase'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const current = policy();
      const now = clock();
      const defaultVersion = current.defaultAt(now);
      const entry = current.versions.find(({ version }) => version === defaultVersion);
      if (entry !== undefined) this.set({ version: String(entry.version), phase: current.phaseOf(entry, now) }, 1);
    },
  });
  // A policy served as written although a rule that depends on the moment is broken (a start is never refused for
  // one): alert VersionPolicyProblem.
  new Gauge({
    name: 'api_version_policy_problems',
    help:
      '1 while the version policy in force breaks the rule: default_version_removed (requests that name no ' +
      'version get 410), brownout_notice_late (a brownout window found at start less than 48 h ahead, unnoticed); ' +
      'else 0.',
    labelNames: ['rule'] as const,
    registers: [registry],
    collect() {
      const broken = policyProblems();
      for (const rule of POLICY_PROBLEM_RULES) this.set({ rule }, broken.has(rule) ? 1 : 0);
    },
  });
  // One series per replica, named by the content it serves: replicas of a job that disagree show as
  // several sha256 values (alert VersionPolicyDrift).
  new Gauge({
    name: 'api_version_policy_info',
    help: 'Always 1; sha256 is the first 12 hex digits of the SHA-256 of the version policy file in force.',
    labelNames: ['sha256'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.set({ sha256: policySha256() }, 1);
    },
  });
  // Read from the consumer table at scrape time; a series only grows while it exists, so each is a counter.
  new Counter({
    name: 'api_version_consumer_requests_total',
    help:
      'Requests on deprecated and removed versions by consumer (X-Client-Id, else User-Agent): up to 20 ' +
      'consumers of a version on this replica by name (the first ones, then the heaviest), counted since they got ' +
      'it, the rest as "other".',
    labelNames: ['version', 'consumer'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { version, consumer, requests } of consumerSeries())
        this.inc({ version: String(version), consumer }, requests);
    },
  });
  // Probed at scrape time, like the backend's db_up: a gauge that no scrape reads costs nothing.
  new Gauge({
    name: 'backend_up',
    help:
      '1 when the backend answered a probe (HEAD / through BACKEND_URL, a status below 500 within a second) at ' +
      'this scrape, else 0.',
    registers: [registry],
    async collect() {
      this.set((await backendAnswers()) ? 1 : 0);
    },
  });
  const reloads = new Counter({
    name: 'api_version_policy_reloads_total',
    help: 'Version policy reloads (SIGHUP, POST /-/reload or a changed file), by result.',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const lastReloadSuccess = new Gauge({
    name: 'api_version_policy_last_reload_success',
    help:
      '1 when the last policy load (at start or a reload) succeeded, 0 when it failed and the previous policy ' +
      'stays in force.',
    registers: [registry],
  });
  const usageDropped = new Counter({
    name: 'consumer_usage_dropped_total',
    help:
      'Authenticated requests left out of the consumer ledger: the replica could not write it and already held ' +
      'its bound of pending rows.',
    registers: [registry],
  });
  const notices = new Counter({
    name: 'consumer_notices_total',
    help:
      'Deprecation notices by milestone, channel (email, webhook) and result: sent; resent (sent after a ' +
      'replica stopped during an earlier delivery: the consumer may have it twice, same id); retried (a failed ' +
      'attempt, tried again later); failed (given up after 24 h); skipped (a later milestone was due).',
    labelNames: ['milestone', 'channel', 'result'] as const,
    registers: [registry],
  });
  // Each label is bounded: versions and resource templates of the policy, two directions, a closed set of reasons.
  const translationFailures = new Counter({
    name: 'translation_failures_total',
    help:
      'Bodies of versions declared as changes that the gateway did not translate, by requested version, resource ' +
      'template, direction (request: answered 400/413/415/503; response: answered 502/503) and reason.',
    labelNames: ['version', 'resource', 'direction', 'reason'] as const,
    registers: [registry],
  });
  // Versions with `compare` and the policy's resource templates; four results.
  const comparisons = new Counter({
    name: 'api_version_comparisons_total',
    help:
      'Answers of a version with "compare" compared with its successor\'s translated back by its declarations, by ' +
      "version, resource template and result: match, differ, error (the successor's answer could not be had or " +
      'translated) or skipped (not compared: too many under way, the answer too large or not sent whole).',
    labelNames: ['version', 'resource', 'result'] as const,
    registers: [registry],
  });
  const requestFieldsDropped = new Counter({
    name: 'consumer_request_fields_dropped_total',
    help:
      'Field paths of authenticated request bodies left unrecorded at a bound: 64 fields per consumer, version ' +
      'and operation, 10,000 such sets or 10,000 rows waiting for the store on a replica.',
    registers: [registry],
  });
  for (const milestone of NOTICE_KINDS)
    for (const channel of CHANNELS) for (const result of NOTICE_RESULTS) notices.inc({ milestone, channel, result }, 0);
  reloads.inc({ result: 'success' }, 0);
  reloads.inc({ result: 'failure' }, 0);
  lastReloadSuccess.set(1);

  // Answers are shared objects per policy and period, so a request finds its tally without building a label
  // set; a WeakMap lets the answers of a replaced policy go.
  const talliesOf = new WeakMap<VersionAnswer, Map<number, RequestTally>>();
  const tallyFor = (answer: VersionAnswer, statusCode: number): RequestTally => {
    const labels = { ...answer.labels, status_code: String(statusCode) };
    const key = `${labels.version} ${labels.deprecated} ${labels.selected_by} ${labels.status_code}`;
    let tally = tallies.get(key);
    if (tally === undefined) {
      tally = { labels, requests: 0 };
      tallies.set(key, tally);
    }
    return tally;
  };
  return {
    countVersionedRequest(answer, statusCode) {
      let byStatus = talliesOf.get(answer);
      if (byStatus === undefined) {
        byStatus = new Map();
        talliesOf.set(answer, byStatus);
      }
      let tally = byStatus.get(statusCode);
      if (tally === undefined) {
        tally = tallyFor(answer, statusCode);
        byStatus.set(statusCode, tally);
      }
      tally.requests += 1;
    },
    countReload(ok) {
      reloads.inc({ result: ok ? 'success' : 'failure' });
      lastReloadSuccess.set(ok ? 1 : 0);
    },
    countUsageDropped(requests) {
      usageDropped.inc(requests);
    },
    countNotice(milestone, channel, result) {
      notices.inc({ milestone, channel, result });
    },
    countTranslationFailure({ version, resource, direction, reason }) {
      translationFailures.inc({ version: String(version), resource, direction, reason });
    },
    countComparison(version, resource, result) {
      comparisons.inc({ version: String(version), resource, result });
    },
    countRequestFieldsDropped(count) {
      requestFieldsDropped.inc(count);
    },
  };
}
