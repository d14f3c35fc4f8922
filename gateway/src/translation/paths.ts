/**
 * Paths of this API between two versions (docs/behaviour.md "Versions declared as changes"): a request's path as
 * the serving version's (`/v1/orders/x` → `/v2/orders/x`, or where a `path` change moved the resource), and a path
 * the serving version names (Location, a `link` field or the Link header) as the requested version's.
 */

/** One resource renamed between two versions: its template in each. */
export interface TemplateRename {
  readonly from: string;
  readonly to: string;
}

/** `/orders/:id` → ['orders', ':id']. */
const segmentsOf = (template: string): string[] => template.slice(1).split('/');

/**
 * `rest` (a path below the version segment, no query) as `rename.to` when it is a path of `rename.from`: each
 * parameter's text carried over by its name; undefined when it is no path of that template.
 */
export function renamedPath(rest: string, { from, to }: TemplateRename): string | undefined {
  const parts = segmentsOf(rest);
  const fromSegments = segmentsOf(from);
  if (parts.length !== fromSegments.length) return undefined;
  const values = new Map<string, string>();
  for (let i = 0; i < parts.length; i++) {
    const segment = fromSegments[i] as string;
    const part = parts[i] as string;
    if (segment.startsWith(':')) {
      if (part === '') return undefined;
      values.set(segment.slice(1), part);
    } else if (segment !== part) return undefined;
  }
  return `/${segmentsOf(to)
    .map((segment) => (segment.startsWith(':') ? (values.get(segment.slice(1)) ?? segment) : segment))
    .join('/')}`;
}

/** `rest` renamed by the first template it is a path of, or as it is. */
function renamedByAny(rest: string, renames: readonly TemplateRename[]): string {
  for (const rename of renames) {
    const renamed = renamedPath(rest, rename);
    if (renamed !== undefined) return renamed;
  }
  return rest;
}

/**
 * An absolute or relative URL of this API: the scheme and authority (if any), `/api` (if any), the version
 * segment's number, the path below it, and what follows (query, fragment, a Link parameter's end).
 */
const API_URL = /^((?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/[^/?#]*)?(\/api)?\/v([1-9][0-9]*)(?=[/?#]|$)(\/[^?#]*)?(.*)$/s;

/**
 * Rewrites a URL naming version `from` into the same place in version `to`, renaming the resources `renames`
 * (templates in `from`'s names → `to`'s). A URL of another version, another path or no URL: undefined.
 */
function rewriteUrl(url: string, from: number, to: number, renames: readonly TemplateRename[]): string | undefined {
  // Most strings of a body name no version: one look for the segment spares them the pattern.
  if (!url.includes(`/v${from}`)) return undefined;
  const match = API_URL.exec(url);
  if (match === null || Number(match[3]) !== from) return undefined;
  const [, origin = '', api = '', , rest = '', tail = ''] = match;
  const path = rest === '' || renames.length === 0 ? rest : renamedByAny(rest, renames);
  return `${origin}${api}/v${to}${path}${tail}`;
}

/** Paths of one version step, both ways: the successor's as this version's (backward), and this version's forward. */
export interface StepPaths {
  /** A URL or path naming the successor, as this version's (a Location, a link). Anything else as it is. */
  readonly backward: (url: string) => string;
  /** A URL or path naming this version, as the successor's (a link in a request body). Anything else as it is. */
  readonly forward: (url: string) => string;
}

/**
 * The paths of the step from `version` to `successor`, where `renames` are its `path` changes (this version's
 * template → the successor's).
 */
export function stepPaths(version: number, successor: number, renames: readonly TemplateRename[]): StepPaths {
  const back = renames.map(({ from, to }) => ({ from: to, to: from }));
  return {
    backward: (url) => rewriteUrl(url, successor, version, back) ?? url,
    forward: (url) => rewriteUrl(url, version, successor, renames) ?? url,
  };
}

/**
 * A Link header value (RFC 8288) with each target rewritten by `rewrite`: `<…/v2/orders?page=2>; rel="next"`. The
 * targets are between `<` and `>`; the rest (parameters, commas) is kept as it is.
 */
export function rewriteLinkTargets(value: string, rewrite: (url: string) => string): string {
  return value.replace(/<([^>]*)>/g, (whole, target: string) => {
    const rewritten = rewrite(target);
    return rewritten === target ? whole : `<${rewritten}>`;
  });
}
