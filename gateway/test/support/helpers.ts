import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, expect } from 'vitest';
import { pino } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError } from '@version-router/platform/config';
import { createRegistry } from '@version-router/platform/metrics';
import { capturedLog } from '../../../platform/test/support/captured-log.js';
import { buildGatewayAdmin } from '../../src/admin.js';
import { buildApp, type GatewayAppOptions } from '../../src/app.js';
import {
  loadPolicyFile,
  policyDigest,
  versionPolicyFileSchema,
  type PolicyFile,
  type PolicySource,
} from '../../src/versions/policy-file.js';
import { createVersionPolicy, type VersionPolicy } from '../../src/versions/policy.js';
import { defaultTranslationLimits } from '../../src/translation/compile.js';
import { createMemoryConsumerStore, type MemoryConsumerStore } from './memory-store.js';
import { startStubBackend, type StubBackend } from './stub-backend.js';

/**
 * The message of the ConfigError `load` throws, which the process prints as its one line when it refuses to
 * start: checked to be a ConfigError and a single line. 'no error' when `load` succeeds.
 */
export function configErrorOf(load: () => unknown): string {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  return 'no error';
}

/**
 * The tests' example policy, on the injected clock (TODAY): v1 deprecated (sunset 2027-01-01), v2 current, default 1, so
 * a request that names no version gets the deprecated v1. The shipped ops/versions.json has the same versions with
 * v2 the default and v1's sunset years ahead (test/static/shipped-dates.test.ts keeps it there).
 */
export const designPolicyFile = {
  default_version: 1,
  versions: [
    { version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2027-01-01T00:00:00Z', successor: 2 },
    { version: 2, status: 'current' },
  ],
};

/**
 * The shipped policy plus what the lifecycle adds: a second resource (`/orders`), the RFC 9745 date
 * form, deprecation and sunset links, and two brownout windows on v1.
 */
export const lifecyclePolicyFile = {
  default_version: 1,
  deprecation_header: 'date',
  resources: ['/orders/:id', '/orders', '/openapi.json'],
  versions: [
    {
      version: 1,
      status: 'deprecated',
      announced: '2026-06-01',
      sunset: '2027-01-01T00:00:00Z',
      successor: 2,
      deprecation_link: 'https://example.com/changelog/v1',
      sunset_link: 'https://example.com/sunset-policy',
      brownouts: [
        { start: '2026-12-01T10:00:00Z', end: '2026-12-01T12:00:00Z' },
        { start: '2026-12-08T10:00:00Z', end: '2026-12-08T16:00:00Z' },
      ],
    },
    { version: 2, status: 'current' },
  ],
};

const policyFileFrom = (file: unknown): PolicyFile => versionPolicyFileSchema.parse(file);
export const policyFrom = (file: unknown): VersionPolicy => createVersionPolicy(policyFileFrom(file));

export const at = (iso: string): number => Date.parse(iso);
/** Inside v1's Warn period (after 2026-06-01, before 2027-01-01). */
export const TODAY = at('2026-11-22T12:00:00Z');
export const V1_SUNSET = at('2027-01-01T00:00:00Z');
/** v1's first brownout window in lifecyclePolicyFile. */
export const BROWNOUT_START = at('2026-12-01T10:00:00Z');
export const BROWNOUT_END = at('2026-12-01T12:00:00Z');
/** What lifecyclePolicyFile's deprecation and sunset links add to v1's Link header, after the successor link. */
export const V1_LIFECYCLE_LINKS =
  ', <https://example.com/changelog/v1>; rel="deprecation"; type="text/html", <https://example.com/sunset-policy>; ' +
  'rel="sunset"';

/** The host name the test gateway's status page names. */
export const TEST_REPLICA = 'gateway-test-1';

export interface TestGateway {
  app: FastifyInstance;
  registry: Registry;
  /** Parsed JSON log lines the app wrote. */
  logs: Record<string, unknown>[];
  /** Moves the injected clock. */
  setNow(epochMs: number): void;
  /** What the next reload reads: a policy file's content, validated then. */
  setNextPolicy(file: unknown): void;
  /** The gateway's admin listener (metrics, reload) on the same registry and log; closed with the app. */
  admin(): Promise<FastifyInstance>;
  /** The consumer store the app was given (in memory). */
  consumerStore: MemoryConsumerStore;
  /** The exposition lines of one metric's series, labelled or not, as the registry writes them now. */
  metricLines(name: string): Promise<string[]>;
}

/** The translation limits a test gateway runs with: the defaults where the test gives none. */
const limitsOf = (maxBytes: number | undefined, maxDepth: number | undefined) => ({
  maxBytes: maxBytes ?? defaultTranslationLimits().maxBytes,
  maxDepth: maxDepth ?? defaultTranslationLimits().maxDepth,
});

export async function buildTestGateway(
  backendUrl: string,
  {
    now = TODAY,
    backendTimeoutMs = 2_000,
    translationMaxBytes,
    translationMaxDepth,
    translationMaxInflightBytes,
    policy = designPolicyFile,
    policyPath,
    consumerStore = createMemoryConsumerStore(),
    adminToken,
    adminHost = '127.0.0.1',
    notices,
    consumerKeysUrl,
    queryKeyParameters,
    pinChangesPerMinute,
  }: {
    /** CONSUMER_KEYS_URL. */
    consumerKeysUrl?: string;
    now?: number;
    backendTimeoutMs?: number;
    /** TRANSLATION_MAX_BYTES; the default when not given. */
    translationMaxBytes?: number;
    /** TRANSLATION_MAX_DEPTH; the default when not given. */
    translationMaxDepth?: number;
    /** TRANSLATION_MAX_INFLIGHT_BYTES; the default when not given. */
    translationMaxInflightBytes?: number;
    policy?: unknown;
    /** A policy file to read instead, at start and at every reload, with the modules its changes name. */
    policyPath?: string;
    consumerStore?: MemoryConsumerStore;
    adminToken?: string;
    adminHost?: string;
    notices?: GatewayAppOptions['notices'];
    /** QUERY_KEY_PARAMETERS; the default when not given. */
    queryKeyParameters?: readonly string[];
    /** PIN_CHANGES_PER_MINUTE; the default when not given. */
    pinChangesPerMinute?: number;
  } = {},
): Promise<TestGateway> {
  const { destination, lines: logs } = capturedLog();
  let clockMs = now;
  let nextPolicy: unknown = policy;
  const registry = createRegistry();
  const logger = pino({ level: 'info' }, destination);
  const app = await buildApp({
    config: {
      backendTimeoutMs,
      translationMaxBytes,
      translationMaxDepth,
      translationMaxInflightBytes,
      consumerKeysUrl,
      queryKeyParameters,
      pinChangesPerMinute,
    },
    policy:
      policyPath === undefined
        ? { file: policyFileFrom(policy), sha256: policyDigest(Buffer.from(JSON.stringify(policy))) }
        : await loadPolicyFile(policyPath, limitsOf(translationMaxBytes, translationMaxDepth)),
    readPolicy: async (): Promise<PolicySource> => {
      if (policyPath !== undefined)
        return loadPolicyFile(policyPath, limitsOf(translationMaxBytes, translationMaxDepth));
      const parsed = versionPolicyFileSchema.safeParse(nextPolicy);
      if (!parsed.success)
        throw new Error(`invalid at ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`);
      return { file: parsed.data, sha256: policyDigest(Buffer.from(JSON.stringify(nextPolicy))) };
    },
    clock: () => clockMs,
    backendUrl,
    logger,
    registry,
    consumerStore,
    notices,
  });
  let admin: Promise<FastifyInstance> | undefined;
  app.addHook('onClose', async () => {
    if (admin !== undefined) await (await admin).close();
  });
  return {
    app,
    registry,
    logs,
    consumerStore,
    setNow: (epochMs) => (clockMs = epochMs),
    setNextPolicy: (file) => (nextPolicy = file),
    admin: () =>
      (admin ??= buildGatewayAdmin({
        app,
        registry,
        logger,
        replica: TEST_REPLICA,
        adminToken,
        host: adminHost,
        clock: () => clockMs,
      })),
    metricLines: async (name) =>
      (await registry.metrics())
        .split('\n')
        .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `)),
  };
}

/** The stub backend and the gateway in front of it that the running test works with. */
export interface StubbedGateway {
  stub: StubBackend;
  gateway: TestGateway;
}

/**
 * For the test file or block that calls it: before each test, a new stub backend and a gateway in front of it that
 * `build` makes (the shipped policy by default); after the test, both closed. The fields are the running test's:
 * read them inside the test, not when the file loads.
 */
export function stubbedGatewayPerTest(
  build: (stubUrl: string) => Promise<TestGateway> = (stubUrl) => buildTestGateway(stubUrl),
): StubbedGateway {
  const current = {} as StubbedGateway;
  beforeEach(async () => {
    current.stub = await startStubBackend();
    current.gateway = await build(current.stub.url);
  });
  afterEach(async () => {
    await current.gateway.app.close();
    await current.stub.close();
  });
  return current;
}
