import type { NoticeMessage } from './message.js';
import type { ClaimedNotice } from './store.js';

/** A way a notice reaches its consumer; `deliver` resolves once the notice was accepted, and rejects with why not. */
export interface NoticeChannel {
  deliver(message: NoticeMessage, notice: ClaimedNotice): Promise<void>;
}

/**
 * `work`, or a rejection once `timeoutMs` have passed: a server that hangs holds the sender up no longer than
 * that. What `work` still does after is bounded by its own socket timeouts.
 */
export async function within<Result>(timeoutMs: number, what: string, work: Promise<Result>): Promise<Result> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
