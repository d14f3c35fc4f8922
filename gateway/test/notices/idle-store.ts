import type { NoticeStore } from '../../src/notices/store.js';

/**
 * A notice store with nothing recorded, nothing to send and no figures, for the tests where notices are not the
 * subject; `overrides` replaces the methods a test watches or answers itself.
 */
export function idleNoticeStore(overrides: Partial<NoticeStore> = {}): NoticeStore {
  return {
    recorded: async () => new Set<string>(),
    record: async () => [],
    claim: async () => [],
    begin: async () => false,
    finish: async () => false,
    ofVersion: async () => ({ notified: new Set<string>(), failed: [], possiblyTwice: 0 }),
    sentOf: async () => [],
    ...overrides,
  };
}
