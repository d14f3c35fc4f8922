import { API_VERSION_VARY, MEDIA_TYPE_VARY } from './headers.js';

/**
 * The ways a request may name its version (docs/versions.md#version-schemes): in the path
 * (`/v2/orders/x`), the `API-Version` header, a query parameter (`?version=2`) and a vendor media type
 * (`Accept: application/vnd.version-router.v2+json`). When a request names its version more than once,
 * this order decides which one the others must agree with.
 */
export const VERSION_SCHEMES = ['path', 'header', 'query', 'media_type'] as const;

export type VersionScheme = (typeof VERSION_SCHEMES)[number];

export const DEFAULT_SCHEMES: readonly VersionScheme[] = ['path', 'header'];

/** How the policy file configures the schemes. */
interface SchemeSettings {
  readonly schemes: readonly VersionScheme[];
  readonly query_parameter: string;
  readonly media_type_vendor: string;
}

/** The enabled schemes of one policy, and how to read each from a request. */
export interface RequestSchemes {
  readonly path: boolean;
  readonly header: boolean;
  readonly query: boolean;
  readonly mediaType: boolean;
  /** The query parameter that names a version (`version`). */
  readonly queryParameter: string;
  /** The media type that names version `label`: `application/vnd.<vendor>.v<label>+json`. */
  mediaTypeOf(label: string): string;
  /** The Vary value every versioned answer carries: the request headers that can change it ('' for none). */
  readonly vary: string;
  /**
   * The query parameter's value, undefined when absent. Repeated with different values, they are joined
   * with ", " (as Node joins a repeated header), which is no version: the request is refused.
   */
  queryVersion(url: string, queryAt: number): string | undefined;
  /** The query without the version parameter (no leading "?"), every other byte as the client sent it. */
  queryWithoutVersion(url: string, queryAt: number): string;
  /**
   * The version named by the vendor media type in Accept, undefined when Accept names none. A media
   * range of the vendor that is not exactly `…v<digits>+json` comes back whole, which is no version.
   */
  mediaTypeVersion(accept: string | undefined): string | undefined;
}

const REGEX_SPECIALS = /[.*+?^${}()|[\]\\]/g;

/** A second value that differs from the first makes the pair unusable; the same value twice is one value. */
function joinValues(found: string | undefined, value: string): string {
  return found === undefined || found === value ? value : `${found}, ${value}`;
}

export function createRequestSchemes({
  schemes,
  query_parameter: parameter,
  media_type_vendor: vendor,
}: SchemeSettings): RequestSchemes {
  const enabled = new Set(schemes);
  const vary = [enabled.has('header') ? API_VERSION_VARY : '', enabled.has('media_type') ? MEDIA_TYPE_VARY : '']
    .filter((name) => name !== '')
    .join(', ');
  // Media types are case-insensitive (RFC 9110 §8.3.1); the tail runs to the next parameter or range.
  const mediaRange = new RegExp(`application/vnd\\.${vendor.replace(REGEX_SPECIALS, '\\$&')}\\.v([^,;\\s]*)`, 'gi');
  const pieceIsParameter = (piece: string): boolean => piece === parameter || piece.startsWith(`${parameter}=`);

  return {
    path: enabled.has('path'),
    header: enabled.has('header'),
    query: enabled.has('query'),
    mediaType: enabled.has('media_type'),
    queryParameter: parameter,
    mediaTypeOf: (label) => `application/vnd.${vendor}.v${label}+json`,
    vary,
    queryVersion(url, queryAt) {
      // Most queries carry no version: one search, no allocation.
      if (url.indexOf(parameter, queryAt) === -1) return undefined;
      let found: string | undefined;
      let start = queryAt + 1;
      while (start <= url.length) {
        let end = url.indexOf('&', start);
        if (end === -1) end = url.length;
        if (url.startsWith(parameter, start)) {
          const after = start + parameter.length;
          if (after === end) found = joinValues(found, '');
          else if (url.charCodeAt(after) === 61 /* = */) found = joinValues(found, url.slice(after + 1, end));
        }
        start = end + 1;
      }
      return found;
    },
    queryWithoutVersion(url, queryAt) {
      return url
        .slice(queryAt + 1)
        .split('&')
        .filter((piece) => !pieceIsParameter(piece))
        .join('&');
    },
    mediaTypeVersion(accept) {
      if (accept === undefined) return undefined;
      let found: string | undefined;
      mediaRange.lastIndex = 0;
      for (let match = mediaRange.exec(accept); match !== null; match = mediaRange.exec(accept)) {
        const tail = match[1] as string;
        const digits = /^(\d+)\+json$/i.exec(tail)?.[1];
        found = joinValues(found, digits ?? match[0]);
      }
      return found;
    },
  };
}
