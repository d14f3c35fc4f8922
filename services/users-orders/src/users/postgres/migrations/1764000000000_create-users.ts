import type { MigrationBuilder } from 'node-pg-migrate';

/**
 * Users keyed by their sequence number, and the one-row counter the numbers come from. The counter is
 * updated in each insert's own statement (see ../store.ts), so a failed insert rolls its number back and
 * ids have no gaps, unlike a sequence's. Timestamps are kept as the exact text the API returned.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE TABLE user_id_counter (
      only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      last_seq bigint NOT NULL CHECK (last_seq >= 0)
    );
    INSERT INTO user_id_counter (last_seq) VALUES (0);
    CREATE TABLE users (
      seq bigint PRIMARY KEY CHECK (seq > 0),
      name text NOT NULL,
      email text NOT NULL,
      created_at text NOT NULL,
      updated_at text NOT NULL
    );
  `);
}

export function down(pgm: MigrationBuilder): void {
  pgm.sql('DROP TABLE users; DROP TABLE user_id_counter;');
}
