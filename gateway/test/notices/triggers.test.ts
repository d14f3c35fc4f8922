import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { NoticeStore } from '../../src/notices/store.js';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';
import { eventually } from '../../../platform/test/support/eventually.mjs';
import { idleNoticeStore } from './idle-store.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await gateway?.app.close();
});

/**
 * A notice store that only counts the checks (each check of a policy with a deprecated version reads what is recorded).
 */
function countingStore(): NoticeStore & { checks: number } {
  const store = Object.assign(
    idleNoticeStore({
      async recorded() {
        store.checks++;
        return new Set<string>();
      },
    }),
    { checks: 0 },
  );
  return store;
}

describe('when the gateway looks for due notices', () => {
  it(
    'at start (once ready), after each successful policy reload, every NOTICES_INTERVAL_MS, and never after ' + 'close',
    async () => {
      // The interval's clock is the test's: only the checks the test asks for happen, at once.
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const store = countingStore();
      gateway = await buildTestGateway('http://127.0.0.1:1', {
        notices: {
          store,
          config: { email: undefined, intervalMs: 1_000, publicBaseUrl: undefined, sendTimeoutMs: 1_000 },
        },
      });
      expect(store.checks, 'nothing before the app is ready').toBe(0);
      await gateway.app.ready();
      await eventually('the check at start', () => store.checks >= 1, { timeoutMs: 2_000 });

      const admin = await gateway.admin();
      const before = store.checks;
      expect((await admin.inject({ method: 'POST', url: '/-/reload' })).statusCode).toBe(200);
      await eventually('the check after the reload', () => store.checks > before, { timeoutMs: 500 });
      gateway.setNextPolicy({ default_version: 1, versions: [] });
      const afterReload = store.checks;
      expect((await admin.inject({ method: 'POST', url: '/-/reload' })).statusCode).toBe(400);
      expect(store.checks, 'no check for a refused policy').toBe(afterReload);

      const counted = store.checks;
      await sleep(100);
      expect(store.checks, 'no check before the interval has passed').toBe(counted);
      vi.advanceTimersByTime(1_000);
      await eventually('a check on the interval', () => store.checks >= counted + 1, { timeoutMs: 2_000 });
      vi.advanceTimersByTime(1_000);
      await eventually('two checks on the interval', () => store.checks >= counted + 2, { timeoutMs: 2_000 });
      await gateway.app.close();
      const closed = store.checks;
      vi.advanceTimersByTime(2_500);
      await sleep(100);
      expect(store.checks).toBe(closed);
      gateway = undefined;
    },
  );
});
