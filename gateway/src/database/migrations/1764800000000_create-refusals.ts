import type { MigrationBuilder } from 'node-pg-migrate';

/**
 * Requests refused to a consumer because their version is closed to new consumers, counted like the ledger's
 * uses (per consumer, version, operation and UTC day) but in a table of their own: a row in `usage` makes a
 * consumer a user of the version (the operators' list, the notices' recipients, `closed_to_new`'s "used
 * before"), and a refused request is no use. Only added: a release before this one reads and writes as it did.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE TABLE refusals (
      consumer_id text NOT NULL REFERENCES consumers (id),
      version integer NOT NULL,
      operation text NOT NULL,
      day date NOT NULL,
      requests bigint NOT NULL CHECK (requests >= 0),
      first_seen timestamptz NOT NULL,
      last_seen timestamptz NOT NULL,
      PRIMARY KEY (consumer_id, version, operation, day)
    );
    CREATE INDEX refusals_version ON refusals (version);
  `);
}

export function down(pgm: MigrationBuilder): void {
  pgm.sql('DROP TABLE refusals;');
}
