// Types of eventually.mjs for the TypeScript tests that import it; the values live there only.
export interface Waiting {
  /** How long the condition has to come true: the wait fails after it. */
  timeoutMs: number;
  /** The pause between two probes; 100 ms unless given. */
  intervalMs?: number;
  /** The state the failure message reports beside the condition. */
  lastSeen?: () => string | Promise<string>;
}
export declare function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  waiting: Waiting,
): Promise<Exclude<T, undefined | false>>;
