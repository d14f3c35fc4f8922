/**
 * The successor's URL from a `Link` field (`<…>; rel="successor-version"`, RFC 5829), resolved against the
 * request's URL; null when the field names none. The field may list several links, and a link several rels.
 */
export function successorLink(link: string | null, base: string): string | null {
  if (link === null) return null;
  for (const match of link.matchAll(/<([^>]*)>([^,<]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] as string);
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (!rels.includes('successor-version')) continue;
    try {
      return new URL(match[1] as string, base).href;
    } catch {
      return null;
    }
  }
  return null;
}

/** `Sunset: <HTTP date>` (RFC 8594) as a Date; null when absent or not a date. */
export function sunsetDate(sunset: string | null): Date | null {
  if (sunset === null) return null;
  const date = new Date(sunset);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A version number header (`API-Version: 1`), or null when absent or not a whole number. */
export function versionNumber(value: string | null | undefined): number | null {
  if (value === null || value === undefined || !/^\s*[0-9]+\s*$/.test(value)) return null;
  return Number(value);
}
