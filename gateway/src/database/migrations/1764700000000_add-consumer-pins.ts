import type { MigrationBuilder } from 'node-pg-migrate';

/**
 * Each consumer's pin: the version its requests that name none are served with (docs/consumers.md#pins), the
 * one it moved from (a rollback's target), and when it last moved. A consumer registered before pins existed
 * has none (NULL) and keeps following `default_version` until it pins one. A pin change renumbers the
 * consumer's row (`seq`), and replicas re-read the keys of consumers renumbered past the value they know,
 * so the new pin reaches every replica's key cache at its next poll.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    ALTER TABLE consumers
      ADD COLUMN pinned_version integer,
      ADD COLUMN previous_version integer,
      ADD COLUMN pinned_at timestamptz;
    CREATE INDEX consumers_seq ON consumers (seq);
  `);
}

export function down(pgm: MigrationBuilder): void {
  pgm.sql(`
    DROP INDEX consumers_seq;
    ALTER TABLE consumers DROP COLUMN pinned_at, DROP COLUMN previous_version, DROP COLUMN pinned_version;
  `);
}
