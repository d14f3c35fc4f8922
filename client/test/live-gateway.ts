import { startDocumentBackend, type DocumentBackend } from '../../gateway/test/support/documents.js';
import { consumerWithKey, createMemoryConsumerStore } from '../../gateway/test/support/memory-store.js';
import { buildTestGateway, designPolicyFile, TODAY, type TestGateway } from '../../gateway/test/support/helpers.js';

/** The real gateway listening on loopback in front of a backend that publishes the orders' OpenAPI documents. */
export interface LiveGateway {
  /** The gateway's public base URL, `http://127.0.0.1:<port>`. */
  url: string;
  gateway: TestGateway;
  backend: DocumentBackend;
  /** A valid key of the registered consumer `acme`. */
  key: string;
  /** A valid key of the registered consumer `idle`, which the tests never make call a version. */
  idleKey: string;
  close(): Promise<void>;
}

/** The shipped policy (v1 deprecated, sunset 2027-01-01, v2 current) by default, at the tests' usual today. */
export async function startLiveGateway({
  policy = designPolicyFile,
  now = TODAY,
}: { policy?: unknown; now?: number } = {}): Promise<LiveGateway> {
  const backend = await startDocumentBackend();
  const store = createMemoryConsumerStore();
  // Registered well before the tests' calls, as consumers are: a registration sets the pin, calls count after it.
  const registered = { nowMs: now - 60 * 86_400_000 };
  const { key } = await consumerWithKey(store, 'acme', registered);
  const { key: idleKey } = await consumerWithKey(store, 'idle', registered);
  const gateway = await buildTestGateway(backend.url, { policy, now, consumerStore: store });
  const url = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    gateway,
    backend,
    key,
    idleKey,
    close: async () => {
      await gateway.app.close();
      await backend.close();
    },
  };
}

/** How many requests the gateway logged for a path: `GET /versions` is read once per client, not per request. */
export const requestsTo = (live: LiveGateway, path: string): number =>
  live.gateway.logs.filter((line) => line.msg === 'request completed' && line.url === path).length;
