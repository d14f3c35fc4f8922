const DAY_MS = 86_400_000;

/**
 * An instant as a person reads it in the status page and the changelog: the date alone when it is
 * midnight UTC (announcements and sunsets usually are), else date and time to the minute, in UTC.
 */
export function readableInstant(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return epochMs % DAY_MS === 0 ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}
