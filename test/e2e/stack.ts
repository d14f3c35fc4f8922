/**
 * The contract between the end-to-end scenarios and the ways of running the stack
 * (real processes here, docker compose under testcontainers where an engine exists).
 * Scenario bodies are written once against this and run against both.
 */
export interface StackEndpoints {
  /** Public API of the gateway, e.g. http://127.0.0.1:8080 (no trailing slash). */
  gatewayUrl: string;
  /** Gateway admin listener: /metrics, /healthz, /readyz. */
  gatewayAdminUrl: string;
  /** Backend admin listener: /metrics, /healthz, /readyz. */
  backendAdminUrl: string;
  /** The version policy file the gateway runs with (absolute path): the scenarios learn the listed versions from it. */
  versionsFile: string;
}

export interface RunningStack extends StackEndpoints {
  /** Stops every process or container of the stack; resolves when all have exited. */
  stop(): Promise<void>;
}
