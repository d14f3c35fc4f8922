import type { MigrationBuilder } from 'node-pg-migrate';

/**
 * The deprecation notices, one row per (consumer, version, milestone, occasion, channel): the row is what
 * makes a notice go out once across the fleet. A replica inserts the due rows (a conflict leaves the one
 * there), then claims a batch of pending ones by setting `claimed_by` and `claimed_until`; a row whose claim
 * has lapsed (its replica stopped) is claimed again by another. `sending` is set while a delivery is under
 * way, so a claim that lapses during one is known (`unconfirmed`): that notice may reach its consumer twice,
 * with the same `message_id`. Times are what the gateway's clock said.
 */
export function up(pgm: MigrationBuilder): void {
  pgm.sql(`
    CREATE TABLE notices (
      consumer_id text NOT NULL REFERENCES consumers (id),
      version integer NOT NULL,
      milestone text NOT NULL,
      occasion text NOT NULL,
      channel text NOT NULL CHECK (channel IN ('email', 'webhook')),
      message_id text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
      due_at timestamptz NOT NULL,
      recorded_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      first_attempt_at timestamptz,
      next_attempt_at timestamptz,
      claimed_by text,
      claimed_until timestamptz,
      sending boolean NOT NULL DEFAULT false,
      unconfirmed integer NOT NULL DEFAULT 0,
      last_error text,
      sent_at timestamptz,
      PRIMARY KEY (consumer_id, version, milestone, occasion, channel)
    );
    CREATE INDEX notices_pending ON notices (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX notices_version ON notices (version, status);
  `);
}

export function down(pgm: MigrationBuilder): void {
  pgm.sql('DROP TABLE notices;');
}
