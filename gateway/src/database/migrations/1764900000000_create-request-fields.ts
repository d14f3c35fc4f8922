import type { MigrationBuilder } from 'node-pg-migrate';

/**
 * The field paths each consumer sent in the JSON bodies of each operation of a version (`customer.id`,
 * `lines[].sku`), with how many requests carried each and when first and last: what an upgrade preview reads to
 * tell which request-side changes touch the consumer (docs/consumers.md#upgrade-preview). Written like the
 * ledger's counts, and bounded per consumer, version and operation by the gateway's writes. Only added: a release
 * before this one reads and writes as it did.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE TABLE request_fields (
      consumer_id text NOT NULL REFERENCES consumers (id),
      version integer NOT NULL,
      operation text NOT NULL,
      field text NOT NULL,
      requests bigint NOT NULL CHECK (requests >= 0),
      first_seen timestamptz NOT NULL,
      last_seen timestamptz NOT NULL,
      PRIMARY KEY (consumer_id, version, operation, field)
    );
    CREATE INDEX request_fields_version ON request_fields (version, last_seen);
  `);
}

export function down(pgm: MigrationBuilder): void {
  pgm.sql('DROP TABLE request_fields;');
}
