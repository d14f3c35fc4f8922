import type { TracingConfig } from './config.js';
import type { AttributeList, Span, SpanSink } from './span.js';

/** Exports in flight at once while a stopping process sends what it holds. */
const SHUTDOWN_EXPORTS_AT_ONCE = 8;

/** What every export says once: the process (its resource attributes) and the instrumentation scope. */
export interface TraceOrigin {
  resource: AttributeList;
  scopeName: string;
}

/** Spans encoded for one export (otlp-protobuf.ts, otlp-json.ts). */
export interface SpanBatch {
  readonly count: number;
  /** Encodes an ended span into the batch. */
  add(span: Span): void;
  /** The export request's body. */
  bytes(): Uint8Array;
  /** The exporter is done with the body: its memory may serve a later batch. */
  release(): void;
}

/** Sends a batch; `done` is called once, whatever the outcome. */
export interface BatchExporter {
  export(batch: SpanBatch, done: () => void): void;
  shutdown(): Promise<void>;
}

/**
 * The batch span processor of the OTEL_BSP_* variables, as the SDK's BatchSpanProcessor runs it: ended spans wait in
 * a queue of at most maxQueueSize (more are dropped, with a warning), a full batch of maxExportBatchSize goes out at
 * once and a partial one scheduledDelayMillis after its first span, one export at a time, given up after
 * exportTimeoutMillis. Spans are encoded as they arrive, into the batch that will carry them, so the queue holds
 * bytes rather than span objects.
 */
export class SpanBatcher implements SpanSink {
  private open: SpanBatch;
  /** Full batches waiting for the export in flight. */
  private readonly full: SpanBatch[] = [];
  /** Spans in `open` and `full`. */
  private queued = 0;
  private dropped = 0;
  private exporting = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly newBatch: () => SpanBatch,
    private readonly exporter: BatchExporter,
    private readonly settings: TracingConfig['batch'],
    private readonly warn: (message: string) => void,
  ) {
    this.open = newBatch();
  }

  record(span: Span): void {
    if (this.stopped) return;
    if (this.queued >= this.settings.maxQueueSize) {
      this.dropped++;
      return;
    }
    if (this.dropped > 0) {
      this.warn(`dropped ${this.dropped} spans: the export queue (OTEL_BSP_MAX_QUEUE_SIZE) was full`);
      this.dropped = 0;
    }
    this.open.add(span);
    this.queued++;
    if (this.open.count >= this.settings.maxExportBatchSize) {
      this.full.push(this.open);
      this.open = this.newBatch();
    }
    this.next();
  }

  /** Exports a full batch if none is in flight, or schedules the partial one. */
  private next(): void {
    // A stopping batcher sends what is left itself (shutdown).
    if (this.exporting || this.stopped) return;
    const batch = this.full.shift();
    if (batch !== undefined) {
      this.clearTimer();
      this.exporting = true;
      this.queued -= batch.count;
      void this.send(batch).then(() => {
        this.exporting = false;
        this.next();
      });
      return;
    }
    if (this.open.count === 0 || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sealOpen();
      this.next();
    }, this.settings.scheduledDelayMillis);
    // A process with nothing else to do may exit: shutdown() sends what is left.
    this.timer.unref();
  }

  private sealOpen(): void {
    if (this.open.count === 0) return;
    this.full.push(this.open);
    this.open = this.newBatch();
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Resolves when the exporter is done with the batch, or after exportTimeoutMillis; the batch's memory is reused only
   * once the exporter is done with it, which an export past its time is not yet.
   */
  private send(batch: SpanBatch): Promise<void> {
    return new Promise((resolve) => {
      const timeout = setTimeout(resolve, this.settings.exportTimeoutMillis);
      timeout.unref();
      this.exporter.export(batch, () => {
        clearTimeout(timeout);
        batch.release();
        resolve();
      });
    });
  }

  /**
   * Sends every span still held, a few batches at a time (the OTLP transport refuses more than a few dozen exports in
   * flight), then stops the exporter; spans ending later are dropped.
   */
  async shutdown(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    this.sealOpen();
    this.queued = 0;
    while (this.full.length > 0) {
      await Promise.all(this.full.splice(0, SHUTDOWN_EXPORTS_AT_ONCE).map((batch) => this.send(batch)));
    }
    await this.exporter.shutdown();
  }
}
