import { Readable } from 'node:stream';

/**
 * A JSON array written batch by batch (each batch: array elements joined by commas, as UTF-8), pulled only as
 * fast as the client reads (backpressure), so memory holds one batch whatever the number of users. A batch
 * that fails after the first destroys the stream: the client sees a cut connection and an unfinished array,
 * never a complete-looking one.
 */
export function jsonArrayStream(batches: AsyncIterable<Uint8Array>): Readable {
  return Readable.from(
    (async function* () {
      let separator = '[';
      for await (const batch of batches) {
        if (batch.length === 0) continue;
        yield separator;
        yield batch;
        separator = ',';
      }
      yield separator === '[' ? '[]' : ']';
    })(),
    { objectMode: false },
  );
}
