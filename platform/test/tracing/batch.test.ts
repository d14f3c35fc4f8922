import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SpanBatcher, type BatchExporter, type SpanBatch } from '../../src/tracing/batch.js';
import type { Span } from '../../src/tracing/span.js';

/**
 * The batch span processor (batch.ts) as the OTEL_BSP_* variables describe it and the SDK's BatchSpanProcessor runs
 * it: full batches at once, a partial one after the delay, one export at a time, a bounded queue, a flush at
 * shutdown. Batches here record the spans' names instead of encoding them.
 */

class NamesBatch implements SpanBatch {
  readonly names: string[] = [];
  released = false;
  get count(): number {
    return this.names.length;
  }
  add(span: Span): void {
    this.names.push(span.name);
  }
  bytes(): Uint8Array {
    return Buffer.from(this.names.join(','));
  }
  release(): void {
    this.released = true;
  }
}

/** An exporter that holds each export until the test completes it. */
function heldExporter() {
  const exports: { names: string[]; batch: NamesBatch; done: () => void }[] = [];
  const shutdown = vi.fn(async () => undefined);
  const exporter: BatchExporter = {
    export: (batch, done) =>
      exports.push({ names: (batch as unknown as NamesBatch).names, batch: batch as unknown as NamesBatch, done }),
    shutdown,
  };
  return { exporter, exports, shutdown };
}

const span = (name: string) => ({ name }) as Span;
const settings = { scheduledDelayMillis: 5_000, exportTimeoutMillis: 30_000, maxQueueSize: 6, maxExportBatchSize: 2 };

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('SpanBatcher', () => {
  it('exports a full batch at once, and one export at a time', async () => {
    const { exporter, exports } = heldExporter();
    const batcher = new SpanBatcher(
      () => new NamesBatch(),
      exporter,
      settings,
      () => undefined,
    );
    for (const name of ['a', 'b', 'c', 'd', 'e']) batcher.record(span(name));
    expect(exports.map((exported) => exported.names)).toEqual([['a', 'b']]);
    exports[0]!.done();
    await vi.advanceTimersByTimeAsync(0);
    expect(exports.map((exported) => exported.names)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    exports[1]!.done();
    await vi.advanceTimersByTimeAsync(0);
    // The partial batch waits for the delay.
    expect(exports).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(exports.map((exported) => exported.names)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('exports a partial batch scheduledDelayMillis after its first span', async () => {
    const { exporter, exports } = heldExporter();
    const batcher = new SpanBatcher(
      () => new NamesBatch(),
      exporter,
      settings,
      () => undefined,
    );
    batcher.record(span('a'));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(exports).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(exports.map((exported) => exported.names)).toEqual([['a']]);
  });

  it('drops the spans a full queue cannot hold, and says how many when it has room again', async () => {
    const { exporter, exports } = heldExporter();
    const warnings: string[] = [];
    const batcher = new SpanBatcher(
      () => new NamesBatch(),
      exporter,
      settings,
      (message) => warnings.push(message),
    );
    // One batch in flight (not queued), then six queued: the queue's size.
    for (let i = 0; i < 8; i++) batcher.record(span(`s${i}`));
    for (let i = 8; i < 11; i++) batcher.record(span(`s${i}`));
    expect(warnings).toEqual([]);
    exports[0]!.done();
    await vi.advanceTimersByTimeAsync(0);
    batcher.record(span('after'));
    expect(warnings).toEqual(['dropped 3 spans: the export queue (OTEL_BSP_MAX_QUEUE_SIZE) was full']);
    // The collector answers every export; the partial batch goes after the delay.
    for (let round = 0; round < 5; round++) {
      for (const exported of exports) exported.done();
      await vi.advanceTimersByTimeAsync(5_000);
    }
    expect(exports.flatMap((exported) => exported.names)).toEqual([
      's0',
      's1',
      's2',
      's3',
      's4',
      's5',
      's6',
      's7',
      'after',
    ]);
  });

  it('frees the export slot when an export outlasts exportTimeoutMillis, its memory only when the export is done', async () => {
    const { exporter, exports } = heldExporter();
    const batcher = new SpanBatcher(
      () => new NamesBatch(),
      exporter,
      settings,
      () => undefined,
    );
    for (const name of ['a', 'b', 'c', 'd']) batcher.record(span(name));
    expect(exports).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(exports.map((exported) => exported.names)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(exports[0]!.batch.released).toBe(false);
    exports[0]!.done();
    expect(exports[0]!.batch.released).toBe(true);
  });

  it('sends every span it holds at shutdown, then stops the exporter and takes no more', async () => {
    const { exporter, exports, shutdown } = heldExporter();
    const batcher = new SpanBatcher(
      () => new NamesBatch(),
      exporter,
      settings,
      () => undefined,
    );
    for (const name of ['a', 'b', 'c', 'd', 'e']) batcher.record(span(name));
    const stopped = batcher.shutdown();
    batcher.record(span('late'));
    expect(exports.map((exported) => exported.names)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    for (const exported of exports) exported.done();
    await stopped;
    expect(shutdown).toHaveBeenCalledOnce();
    expect(exports.flatMap((exported) => exported.names)).not.toContain('late');
  });

  it('sends what it holds at shutdown a few batches at a time', async () => {
    const { exporter, exports } = heldExporter();
    const large = { ...settings, maxQueueSize: 100 };
    const batcher = new SpanBatcher(
      () => new NamesBatch(),
      exporter,
      large,
      () => undefined,
    );
    for (let i = 0; i < 40; i++) batcher.record(span(`s${i}`));
    // One export in flight; 19 batches held.
    expect(exports).toHaveLength(1);
    const stopped = batcher.shutdown();
    expect(exports).toHaveLength(1 + 8);
    for (const exported of exports) exported.done();
    await vi.advanceTimersByTimeAsync(0);
    expect(exports).toHaveLength(1 + 16);
    for (const exported of exports) exported.done();
    await vi.advanceTimersByTimeAsync(0);
    for (const exported of exports) exported.done();
    await stopped;
    expect(exports.flatMap((exported) => exported.names)).toHaveLength(40);
  });
});
