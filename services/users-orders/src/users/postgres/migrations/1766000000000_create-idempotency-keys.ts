import type { MigrationBuilder } from 'node-pg-migrate';

/**
 * The Idempotency-Keys of POST /api/users, shared by every replica: per key, the payload's fingerprint and the
 * created user as the first answer carried it (JSON text, so a replay is the same bytes), until `expires_at`.
 * A row is written in the same transaction as its user (see ../store.ts); expired rows are ignored by reads and
 * deleted in small batches (the index on expires_at finds them).
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE TABLE idempotency_keys (
      key text PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 255),
      fingerprint text NOT NULL,
      created_user text NOT NULL,
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
  `);
}

export function down(pgm: MigrationBuilder): void {
  pgm.sql('DROP TABLE idempotency_keys;');
}
