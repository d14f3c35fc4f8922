import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '@version-router/platform/clock';
import {
  DEFAULT_QUERY_KEY_PARAMETERS,
  baseServerOptions,
  httpFoundation,
  queryKeyNames,
} from '@version-router/platform/http-foundation';
import { httpMetrics } from '@version-router/platform/metrics';
import type { Tracing } from '@version-router/platform/tracing';
import { changelogRoutes, type ChangelogRoutesOptions } from './changelog/routes.js';
import { changesRoutes } from './changes/routes.js';
import { createMigrationGuides, type MigrationGuides } from './changes/guides.js';
import { createGatewayMetrics } from './accounting/metrics.js';
import { requestAccounting } from './accounting/request-accounting.js';
import { createVersionUsage, type VersionUsage } from './accounting/usage.js';
import { createComparisons, type Comparisons } from './comparison/comparisons.js';
import { consumerRequest } from './consumers/authenticate.js';
import { loadKeyCache, type KeyCache } from './consumers/key-cache.js';
import { createLedger, type Ledger } from './consumers/ledger.js';
import { deprecationsRoutes } from './consumers/reports/deprecations-routes.js';
import { refuseKeysInQuery } from './consumers/query-keys.js';
import { createRequestFields } from './consumers/request-fields.js';
import { selfServiceRoutes } from './consumers/self-service-routes.js';
import type { ConsumerRecord, ConsumerStore, PinRecord } from './consumers/store.js';
import {
  DEFAULT_PIN_CHANGES_PER_MINUTE,
  DEFAULT_TRANSLATION_MAX_INFLIGHT_BYTES,
  type NoticesConfig,
} from './config.js';
import { noticedBrownouts } from './notices/due.js';
import { createNotices } from './notices/notices.js';
import type { NoticeScheduler } from './notices/scheduler.js';
import type { NoticeStore } from './notices/store.js';
import { createBackendPool } from './proxy/backend.js';
import { backendAnswers } from './proxy/backend-up.js';
import { usersProxy } from './proxy/users.js';
import { replyOptionsFor, versionedResources } from './resources/routes.js';
import { createTranslatedForwarding, type TranslatedRoutes } from './proxy/translated/forwarding.js';
import { HeldBytes } from './proxy/translated/held-bytes.js';
import { defaultTranslationLimits } from './translation/compile.js';
import { discoveryRoutes } from './versions/discovery.js';
import { watchDefaultVersion } from './versions/default-watch.js';
import { createPolicyInForce, type PolicyInForce } from './versions/in-force.js';
import { createPolicyProblems } from './versions/policy-problems.js';
import type { PolicySource } from './versions/policy-file.js';
import { watchPolicyFile, type PolicyWatchOptions } from './versions/watch.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The version policy in force; `reload()` is what SIGHUP and `POST /-/reload` call. */
    versionPolicies: PolicyInForce<TranslatedRoutes>;
    /** Recent requests per version and the consumers of deprecated ones, for the admin port's page. */
    versionUsage: VersionUsage;
    /** Migration guides between versions, served on the public port and beside the status page. */
    migrationGuides: MigrationGuides;
    /** Registered consumers: the shared store, this replica's keys in memory, and its ledger of their use. */
    consumers: { store: ConsumerStore; keys: KeyCache; ledger: Ledger };
    /** What the changelog is rendered from, served on the public port and beside the status page. */
    changelog: ChangelogRoutesOptions;
    /** The deprecation notices' records, for the status page; undefined when this app sends none. */
    noticeStore: NoticeStore | undefined;
    /** Tells a consumer of a pin the platform team moved; undefined when this app sends no notices. */
    notifyPinMoved: NoticeScheduler['pinMoved'] | undefined;
    /** What the comparisons of versions with `compare` found on this replica. */
    comparisons: Comparisons;
  }
}

export interface GatewayAppOptions {
  /** translationMax*: TRANSLATION_MAX_BYTES, TRANSLATION_MAX_DEPTH, TRANSLATION_MAX_INFLIGHT_BYTES, their defaults when
   * not given. consumerKeysUrl: CONSUMER_KEYS_URL, named by every 401 of a key. queryKeyParameters:
   * QUERY_KEY_PARAMETERS. pinChangesPerMinute: PIN_CHANGES_PER_MINUTE (docs/configuration.md). */
  config: {
    backendTimeoutMs: number;
    translationMaxBytes?: number;
    translationMaxDepth?: number;
    translationMaxInflightBytes?: number;
    consumerKeysUrl?: string;
    queryKeyParameters?: readonly string[];
    pinChangesPerMinute?: number;
  };
  /** The policy file main.ts read and validated at start. */
  policy: PolicySource;
  /** Reads and validates the policy file again, its modules loaded (a reload); rejects with the reason. */
  readPolicy: () => Promise<PolicySource>;
  /** Watch this policy file and reload it when its content changes (API_VERSIONS_WATCH); stopped on close. */
  watchPolicy?: Omit<PolicyWatchOptions, 'policies'>;
  clock: Clock;
  backendUrl: string;
  logger: Logger;
  registry: Registry;
  /** The process's tracer (docs/tracing.md): a server span per request; shut down with the app. Absent: no traces. */
  tracing?: Tracing;
  /**
   * The consumer store (opened and migrated by main.ts). The app owns it from here: its keys are loaded now
   * (the build fails when it cannot be read), and it is closed with the app, after the ledger's last flush.
   */
  consumerStore: ConsumerStore;
  /** The deprecation notices (main.ts: always); absent, none are looked for or sent. */
  notices?: { store: NoticeStore; config: NoticesConfig };
  /** Draws in [0, 1) that sample the requests of versions with `compare`; Math.random unless a test chooses. */
  sampling?: () => number;
}

/** The public gateway, not listening: main.ts listens, tests inject. */
export async function buildApp({
  config,
  policy,
  readPolicy,
  watchPolicy,
  clock,
  backendUrl,
  logger,
  registry,
  tracing,
  consumerStore,
  notices: noticesOptions,
  sampling,
}: GatewayAppOptions): Promise<FastifyInstance> {
  const queryKeyParameters = config.queryKeyParameters ?? DEFAULT_QUERY_KEY_PARAMETERS;
  const app = Fastify(baseServerOptions(logger, { queryKeyParameters, tracing }));
  // Registered first, so it runs last: the spans of the last requests are sent after everything else has closed.
  if (tracing !== undefined) app.addHook('onClose', () => tracing.shutdown());
  await app.register(httpFoundation);
  await app.register(httpMetrics, { registry });
  // Before any route: a key in the query string is refused on every route, unmatched ones included.
  app.addHook('onRequest', refuseKeysInQuery(queryKeyNames(queryKeyParameters)));

  const usage = createVersionUsage(clock);
  app.decorate('versionUsage', usage);
  // The gauges read the policy in force (and probe the backend pool, made below) at scrape time, so they
  // follow a reload.
  const metrics = createGatewayMetrics(registry, {
    policy: () => policies.current.policy,
    policySha256: () => policies.current.sha256,
    policyProblems: () => problems.brokenNow(),
    consumerSeries: () => usage.consumers.series(),
    backendAnswers: () => backendAnswers(pool),
    clock,
  });
  let notices: NoticeScheduler | undefined;
  const translationLimits = {
    maxBytes: config.translationMaxBytes ?? defaultTranslationLimits().maxBytes,
    maxDepth: config.translationMaxDepth ?? defaultTranslationLimits().maxDepth,
  };
  const translated = createTranslatedForwarding({
    limits: {
      ...translationLimits,
      held: new HeldBytes(config.translationMaxInflightBytes ?? DEFAULT_TRANSLATION_MAX_INFLIGHT_BYTES),
    },
    countFailure: (failure) => metrics.countTranslationFailure(failure),
    baseFor: replyOptionsFor,
    // The request fields' recorder is made with the consumer store's, below; no request arrives before.
    sentBody: (request, body) => requestFields.sent(request, body),
  });
  const policies: PolicyInForce<TranslatedRoutes> = createPolicyInForce({
    initial: policy,
    read: readPolicy,
    onReload: (result) => {
      metrics.countReload(result.ok);
      if (result.ok) {
        const { policy: reloaded, sha256 } = policies.current;
        logger.info({ versions: reloaded.versions.map(({ version }) => version), sha256 }, 'version policy reloaded');
        defaultWatch.check(true);
        // A new policy may bring a milestone due now (an announcement, a window moved closer).
        void notices?.check();
      } else
        logger.error({ reason: result.reason }, 'version policy reload failed; the previous policy stays in force');
    },
    clock,
    limits: translationLimits,
    prepare: (translations) => translated.prepare(translations),
  });
  const defaultWatch = watchDefaultVersion({ policies, clock, logger });
  defaultWatch.check(true);
  const noticeStore = noticesOptions?.store;
  const problems = createPolicyProblems({
    policies,
    clock,
    logger,
    noticedWindows:
      noticeStore === undefined
        ? undefined
        : async (versions) => noticedBrownouts(await noticeStore.recorded(versions)),
  });
  await problems.checkStart();
  app.addHook('onClose', async () => defaultWatch.close());
  app.decorate('versionPolicies', policies);
  if (watchPolicy !== undefined) {
    const watch = watchPolicyFile({ ...watchPolicy, policies });
    app.addHook('onClose', async () => watch.close());
  }

  const ledger = createLedger({
    store: consumerStore,
    logger,
    countDropped: (requests) => metrics.countUsageDropped(requests),
  });
  const requestFields = createRequestFields({
    store: consumerStore,
    logger,
    clock,
    countDropped: (count) => metrics.countRequestFieldsDropped(count),
  });
  const keys = await loadKeyCache({ store: consumerStore, logger, learnFirstUses: (uses) => ledger.learn(uses) });
  app.decorate('consumers', { store: consumerStore, keys, ledger });
  // onClose runs once in-flight requests have finished, so their counts are in the last flush.
  app.addHook('onClose', async () => {
    await notices?.stop();
    keys.stop();
    await ledger.close();
    await requestFields.close();
    await consumerStore.close();
  });

  const pool = createBackendPool(backendUrl, config.backendTimeoutMs);
  // reply-from leaves a pool it was handed open; its keep-alive sockets would hold shutdown up.
  app.addHook('onClose', async () => {
    await pool.close();
  });

  await app.register(consumerRequest, { consumerKeysUrl: config.consumerKeysUrl });
  await app.register(requestAccounting, { metrics, usage, ledger, clock });
  await app.register(usersProxy, { backendUrl, pool, keys });
  await app.register(discoveryRoutes, { policies, clock });
  const guides = createMigrationGuides(pool);
  app.decorate('migrationGuides', guides);
  await app.register(changesRoutes, { policies, guides });
  await app.register(deprecationsRoutes, { policies, keys, reader: consumerStore, guides, clock });
  await app.register(selfServiceRoutes, {
    policies,
    store: consumerStore,
    keys,
    ledger,
    clock,
    guides,
    pinChangesPerMinute: config.pinChangesPerMinute ?? DEFAULT_PIN_CHANGES_PER_MINUTE,
  });
  if (noticesOptions !== undefined) {
    notices = createNotices({
      ...noticesOptions,
      consumers: consumerStore,
      guides,
      policy: () => policies.current.policy,
      clock,
      backendTimeoutMs: config.backendTimeoutMs,
      logger: logger.child({ component: 'notices' }),
      count: (milestone, channel, result) => metrics.countNotice(milestone, channel, result),
    });
    // Checked once the app is ready (listening, or its first inject), then every NOTICES_INTERVAL_MS.
    const scheduler = notices;
    app.addHook('onReady', async () => scheduler.start());
  }
  app.decorate('noticeStore', noticesOptions?.store);
  const scheduled = notices;
  app.decorate(
    'notifyPinMoved',
    scheduled === undefined
      ? undefined
      : (consumer: ConsumerRecord, moved: PinRecord) => scheduled.pinMoved(consumer, moved),
  );
  const changelog: ChangelogRoutesOptions = { policies, clock };
  app.decorate('changelog', changelog);
  await app.register(changelogRoutes, changelog);
  const comparisons = createComparisons({
    backendUrl,
    clock,
    logger,
    ...translationLimits,
    count: (version, resource, result) => metrics.countComparison(version, resource, result),
    ...(sampling === undefined ? {} : { random: sampling }),
  });
  // Comparisons under way are abandoned at a stop: they never delay one.
  app.addHook('onClose', () => comparisons.close());
  app.decorate('comparisons', comparisons);
  await app.register(versionedResources, {
    policies,
    clock,
    backendUrl,
    pool,
    keys,
    ledger,
    translated,
    comparisons,
    requestFields,
  });
  return app;
}
