/** The request header that selects a version in the header form (lower case, as Node delivers it). */
export const VERSION_REQUEST_HEADER = 'api-version';

/**
 * With the header scheme on, every versioned response depends on the API-Version header, the path
 * form's included (a different value is a conflict); with the media type scheme on, on Accept too.
 */
export const API_VERSION_VARY = 'API-Version';
export const MEDIA_TYPE_VARY = 'Accept';
/** A request naming no version is served its consumer's pin: those answers vary on the key (docs/consumers.md#pins). */
export const API_KEY_VARY = 'API-Key';

/**
 * Response headers the version policy owns on a versioned resource: the policy's answer sets them,
 * and the same names are removed from the backend's answer so the two never contradict each other.
 * `Vary` is shared (merged with the backend's), and `Retry-After` is the policy's only on its own
 * brownout answers, so a backend's Retry-After on a proxied answer passes through.
 */
export const POLICY_HEADERS = [
  'deprecation',
  'sunset',
  'link',
  'api-version',
  'api-supported-versions',
  'api-deprecated-versions',
  'api-default-version-change',
] as const;

export type PolicyHeader = (typeof POLICY_HEADERS)[number] | 'vary' | 'retry-after';

/**
 * On an answer to a request that named no version and got default_version, while a move of the default is
 * announced and not yet due: `API-Default-Version-Change: 2; at=@1798761600`, a Structured Field (RFC 9651)
 * integer, the version such requests get from then, with the instant as a Date parameter (the form RFC 9745's
 * `Deprecation` uses). docs/policy-file.md#default-version-changes.
 */
export const DEFAULT_CHANGE_HEADER = 'api-default-version-change';

/** The header's value for a move to `to` at `atMs`. */
export const defaultChangeValue = (to: number, atMs: number): string => `${to}; at=@${Math.floor(atMs / 1000)}`;

/** HTTP's IMF-fixdate (RFC 9110 §5.6.7), e.g. "Thu, 01 Jan 2099 00:00:00 GMT". */
export function imfFixdate(epochMs: number): string {
  return new Date(epochMs).toUTCString();
}
