import type { MigrationBuilder } from 'node-pg-migrate';

/**
 * Consumers, their keys, their first use of each version and the usage ledger, in the schema `gateway` (the
 * runner sets it as the search path). `changes` is a one-row counter that every change of a consumer, a key
 * or a first use bumps in its own transaction and writes into the changed row's `seq`: replicas poll the
 * counter and read only the rows past the value they know. The counter's row lock orders the writers, so
 * every row up to a counter value read is committed and visible. Times are what the gateway's clock said,
 * in milliseconds.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE TABLE changes (
      only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      seq bigint NOT NULL CHECK (seq >= 0)
    );
    INSERT INTO changes (seq) VALUES (0);
    CREATE TABLE consumers (
      id text PRIMARY KEY,
      name text NOT NULL,
      contact_email text,
      webhook_url text,
      webhook_secret text,
      created_at timestamptz NOT NULL,
      seq bigint NOT NULL
    );
    CREATE TABLE api_keys (
      key_id text PRIMARY KEY,
      consumer_id text NOT NULL REFERENCES consumers (id),
      digest bytea NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz,
      seq bigint NOT NULL
    );
    CREATE INDEX api_keys_consumer ON api_keys (consumer_id);
    CREATE INDEX api_keys_seq ON api_keys (seq);
    CREATE TABLE first_uses (
      consumer_id text NOT NULL REFERENCES consumers (id),
      version integer NOT NULL,
      first_seen timestamptz NOT NULL,
      seq bigint NOT NULL,
      PRIMARY KEY (consumer_id, version)
    );
    CREATE INDEX first_uses_seq ON first_uses (seq);
    CREATE TABLE usage (
      consumer_id text NOT NULL REFERENCES consumers (id),
      version integer NOT NULL,
      operation text NOT NULL,
      day date NOT NULL,
      requests bigint NOT NULL CHECK (requests >= 0),
      first_seen timestamptz NOT NULL,
      last_seen timestamptz NOT NULL,
      PRIMARY KEY (consumer_id, version, operation, day)
    );
    CREATE INDEX usage_version ON usage (version, day);
  `);
}

export function down(pgm: MigrationBuilder): void {
  pgm.sql('DROP TABLE usage; DROP TABLE first_uses; DROP TABLE api_keys; DROP TABLE consumers; DROP TABLE changes;');
}
