import { Readable } from 'node:stream';
import type { User } from './store.js';

/**
 * A JSON array written batch by batch, pulled only as fast as the client reads (backpressure), so memory
 * holds one batch whatever the number of users. A batch that fails after the first destroys the stream: the
 * client sees a cut connection and an unfinished array, never a complete-looking one.
 */
export function jsonArrayStream(batches: AsyncIterable<User[]>): Readable {
  return Readable.from(
    (async function* () {
      let separator = '[';
      for await (const batch of batches) {
        if (batch.length === 0) continue;
        yield separator + batch.map((user) => JSON.stringify(user)).join(',');
        separator = ',';
      }
      yield separator === '[' ? '[]' : ']';
    })(),
    { objectMode: false },
  );
}
