import type { Readable } from 'node:stream';
import { serverLimits } from '@version-router/platform/server-limits';

/**
 * The bytes the gateway holds to translate bodies (docs/declared-versions.md "Translation that fails closed"): each body
 * is read whole up to TRANSLATION_MAX_BYTES, and all of them together stay under TRANSLATION_MAX_INFLIGHT_BYTES.
 */

/** One body's share of the budget: taken as it arrives, given back once when the translation is done with it. */
export interface Hold {
  /** Takes `bytes` more; false (and nothing taken) when the budget has no room. */
  take(bytes: number): boolean;
  /** Gives back what is held: the body was handed on, refused, or never arrived. */
  release(): void;
}

/** The bytes held by every translation in progress, against their limit (TRANSLATION_MAX_INFLIGHT_BYTES). */
export class HeldBytes {
  private held = 0;

  constructor(readonly limit: number) {}

  /** A hold for one body; whoever reads the body releases it on every way out (the read's outcome, the translation). */
  hold(): Hold {
    let mine = 0;
    return {
      take: (bytes) => {
        if (this.held + bytes > this.limit) return false;
        this.held += bytes;
        mine += bytes;
        return true;
      },
      release: () => {
        this.held -= mine;
        mine = 0;
      },
    };
  }
}

/** How reading a body ended. */
export type ReadOutcome =
  | { readonly kind: 'body'; readonly bytes: Buffer }
  /** Longer than the limit, or no room in the budget: not held, the rest of it read and discarded. */
  | { readonly kind: 'too_large' | 'busy'; readonly drained: boolean }
  /** The stream failed or its sender went away. */
  | { readonly kind: 'failed' };

/**
 * Reads `stream` whole up to `maxBytes`, taking each chunk from `hold` unless `reserved` (its length was taken
 * already). A body that is too long or finds no room is not kept: with `drain`, the rest of it is read and discarded
 * (up to the server's drain bound), so the answer reaches a client that is still sending instead of a reset;
 * without, the stream is destroyed (an upstream answer nobody will read). `done` is called once.
 */
export function readWhole(
  stream: Readable,
  { maxBytes, hold, reserved, drain }: { maxBytes: number; hold: Hold; reserved: boolean; drain: boolean },
  done: (outcome: ReadOutcome) => void,
): void {
  let chunks: Buffer[] = [];
  let received = 0;
  let refused: 'too_large' | 'busy' | undefined;
  let finished = false;
  const finish = (outcome: ReadOutcome) => {
    if (finished) return;
    finished = true;
    stream.removeListener('data', onData);
    done(outcome);
  };
  const refuse = (kind: 'too_large' | 'busy') => {
    refused = kind;
    chunks = [];
    if (!drain) {
      stream.destroy();
      finish({ kind, drained: false });
    }
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (refused !== undefined) {
      // Past the drain bound the client is given up on: the answer goes now, and the connection is closed.
      if (received > serverLimits.oversizedDrainLimitBytes) finish({ kind: refused, drained: false });
      return;
    }
    if (received > maxBytes) refuse('too_large');
    else if (!reserved && !hold.take(chunk.length)) refuse('busy');
    else chunks.push(chunk);
  };
  stream.on('data', onData);
  stream.once('end', () => {
    finish(
      refused === undefined
        ? { kind: 'body', bytes: Buffer.concat(chunks, received) }
        : { kind: refused, drained: true },
    );
  });
  stream.once('error', () => finish({ kind: 'failed' }));
  stream.once('close', () => finish({ kind: 'failed' }));
}

/**
 * Reads the rest of a request body and discards it (up to the server's drain bound), then calls `then` with
 * whether it all arrived: answering before the client has sent its body would have the connection reset under
 * the answer.
 */
export function discardRest(stream: Readable, then: (drained: boolean) => void): void {
  const nothing: Hold = { take: () => false, release: () => undefined };
  readWhole(stream, { maxBytes: -1, hold: nothing, reserved: true, drain: true }, (outcome) => {
    then(outcome.kind === 'body' || (outcome.kind !== 'failed' && outcome.drained));
  });
}
