/** How the whole-array listing reads a batch out of PostgreSQL's COPY binary output (src/users/postgres/listing.ts). */
import { describe, expect, it } from 'vitest';
import { listingBatchStatement, readListingBatch } from '../../../src/users/postgres/listing.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** COPY binary output of one row: the header (flags 0, `extension` after it), the fields, the trailer. */
function copyBinary(fields: (Buffer | null)[], extension = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(extension.length, 4);
  const count = Buffer.alloc(2);
  count.writeInt16BE(fields.length);
  const encoded = fields.map((field) => {
    const length = Buffer.alloc(4);
    length.writeInt32BE(field === null ? -1 : field.length);
    return field === null ? length : Buffer.concat([length, field]);
  });
  return Buffer.concat([SIGNATURE, header, extension, count, ...encoded, Buffer.from([0xff, 0xff])]);
}

const int8 = (value: bigint): Buffer => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(value);
  return bytes;
};
const int4 = (value: number): Buffer => {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(value);
  return bytes;
};

describe('readListingBatch', () => {
  it('reads the last sequence number, the count and the JSON bytes of a batch', () => {
    const batch = readListingBatch(
      copyBinary([int8(4_200n), int4(2), Buffer.from('{"id":"user-1"},{"id":"user-4200"}')]),
    );
    expect(batch.lastSeq).toBe(4_200);
    expect(batch.count).toBe(2);
    expect(Buffer.from(batch.json).toString()).toBe('{"id":"user-1"},{"id":"user-4200"}');
  });

  it(
    'reads an empty batch (no rows after the cursor: NULL max and aggregate) as no sequence number and no ' + 'bytes',
    () => {
      const batch = readListingBatch(copyBinary([null, int4(0), null]));
      expect(batch).toEqual({ lastSeq: undefined, count: 0, json: new Uint8Array(0) });
    },
  );

  it('skips a header extension', () => {
    const batch = readListingBatch(copyBinary([int8(7n), int4(1), Buffer.from('{}')], Buffer.from('ext!')));
    expect(batch.lastSeq).toBe(7);
  });

  it('refuses bytes that are not COPY binary output, or a row of another shape', () => {
    expect(() => readListingBatch(Buffer.from('7\t1\t{}\n'))).toThrow('listing batch: not COPY binary output');
    expect(() => readListingBatch(copyBinary([int8(7n), int4(1)]))).toThrow('listing batch: expected 3 fields, got 2');
  });
});

describe('listingBatchStatement', () => {
  it('writes the cursor into the statement (COPY takes no parameters), and only a sequence number', () => {
    expect(listingBatchStatement(1_000)).toContain('WHERE seq > 1000 ORDER BY seq LIMIT 1000');
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => listingBatchStatement(bad)).toThrow(RangeError);
  });
});
