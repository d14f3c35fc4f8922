/**
 * The memory batches are encoded into, reused from one batch to the next: a batch of 512 spans takes a few hundred
 * KiB, and a new allocation of that size for every batch is fresh pages for the kernel to map and the garbage
 * collector to account for. A buffer comes back once its export is done (SpanBatch.release); at most `keep` wait.
 */
/** Buffers kept for reuse: a full queue's batches (2048 spans of 512 by default), the open one and the one in flight. */
export const BATCHES_KEPT = 6;

export class BatchMemory {
  private readonly spare: Buffer[] = [];
  /** The size a new buffer starts at: the largest a batch has needed so far. */
  private size: number;

  constructor(
    initialSize: number,
    private readonly keep: number,
  ) {
    this.size = initialSize;
  }

  take(): Buffer {
    return this.spare.pop() ?? Buffer.allocUnsafe(this.size);
  }

  /** A buffer a batch is done with (it may have grown while the batch was written). */
  give(buffer: Buffer): void {
    if (buffer.length > this.size) this.size = buffer.length;
    // One that grew replaces the smaller ones, which would only grow again.
    if (buffer.length < this.size) return;
    if (this.spare.length < this.keep) this.spare.push(buffer);
  }
}
