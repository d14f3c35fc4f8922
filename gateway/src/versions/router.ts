import FindMyWay from 'find-my-way';
import { renamedPath } from '../translation/paths.js';
import type { VersionEntry } from './policy-file.js';
import type { RequestSchemes } from './schemes.js';
import { isListedFor, routeFormsOf, type ListedResource } from '../translation/templates.js';

/**
 * How a matched path names its version: in the path (`/v2/…`, `/api/v2/…`) or not (the bare path:
 * header, query, media type).
 */
interface ResourceRoute {
  readonly form: 'path' | 'header';
  /** `''` or `/api`: the path form's own prefix, kept in the successor Link. */
  readonly prefix: '' | '/api';
  /**
   * The route label for metrics and logs per version label (`/v1/orders/:id`); the template itself in the header form.
   */
  readonly labels: ReadonlyMap<string, string>;
  readonly template: string;
  /** Whether a version has this resource (`resources` may list it for some versions only). */
  readonly servedIn: (version: number) => boolean;
  /** Per version, where its successor serves this resource when a `path` change renamed it there. */
  readonly renamedIn: ReadonlyMap<number, string>;
}

export interface ResourceMatch {
  readonly route: ResourceRoute;
  /** The version label of a path form (`2` in `/v2/…`); '' in the header form. */
  readonly versionLabel: string;
}

export interface ResourceRouter {
  /** The route a request path (no query) belongs to, or null when it is no versioned resource. */
  match(path: string): ResourceMatch | null;
}

/**
 * Matches request paths against every form of every resource by pattern (`/v:version/orders/:id`),
 * so a new version or resource in a reloaded policy needs no new Fastify route. Built once per policy.
 * The path forms exist while the path scheme is on; the bare path while any other scheme is (it is
 * where the header, the query parameter, the media type or default_version choose).
 */
export function createResourceRouter(
  resources: readonly ListedResource[],
  versions: readonly VersionEntry[],
  schemes: RequestSchemes,
): ResourceRouter {
  const router = FindMyWay<FindMyWay.HTTPVersion.V1>();
  const labels = versions.map(({ version }) => String(version));
  for (const resource of resources) {
    const template = resource.path;
    const [header, path, apiPath] = routeFormsOf(template) as [string, string, string];
    const servedIn = (version: number) => isListedFor(resource, version);
    const renamedIn = new Map(
      versions.flatMap(({ version, changes }) =>
        (changes ?? []).flatMap((change) =>
          change.op === 'path' && change.resource === template ? [[version, change.to] as const] : [],
        ),
      ),
    );
    const shared = { template, servedIn, renamedIn };
    const routes: [string, ResourceRoute][] = [
      [header, { form: 'header', prefix: '', ...shared, labels: new Map([['', template]]) }],
      [
        path,
        {
          form: 'path',
          prefix: '',
          ...shared,
          labels: new Map(labels.map((label) => [label, `/v${label}${template}`])),
        },
      ],
      [
        apiPath,
        {
          form: 'path',
          prefix: '/api',
          ...shared,
          labels: new Map(labels.map((label) => [label, `/api/v${label}${template}`])),
        },
      ],
    ];
    for (const [pattern, route] of routes) {
      const served = route.form === 'path' ? schemes.path : schemes.header || schemes.query || schemes.mediaType;
      if (served) router.on('GET', pattern, () => undefined, route);
    }
  }
  return {
    match(path) {
      const found = router.find('GET', path);
      if (found === null) return null;
      const route = found.store as ResourceRoute;
      return { route, versionLabel: route.form === 'path' ? (found.params.version ?? '') : '' };
    },
  };
}

/** A path of unreserved characters and slashes only: decoding and re-encoding it gives it back unchanged. */
const UNRESERVED_PATH = /^[A-Za-z0-9\-._~/]*$/;

/**
 * Decodes then re-encodes each segment, so a Link target never carries characters a client sent raw. A path
 * that needs neither (almost every one) is taken as it is: splitting and rebuilding it cost a deprecated
 * version's every request measurably (bench/README.md#tuning-history-before--after).
 */
function encodeSegments(path: string): string {
  if (UNRESERVED_PATH.test(path)) return path;
  return path
    .split('/')
    .map((segment) => {
      try {
        return encodeURIComponent(decodeURIComponent(segment));
      } catch {
        return encodeURIComponent(segment);
      }
    })
    .join('/');
}

/** A request path without its version (`/api/v1/orders/x` → `/orders/x`); the header form's as it is. */
export function pathBelowVersion(match: ResourceMatch, path: string): string {
  const { route, versionLabel } = match;
  return route.form === 'path' ? path.slice(route.prefix.length + 2 + versionLabel.length) : path;
}

/**
 * The successor's URL for a request path of `version`: the same path with the successor's number (at the path a
 * `path` change of the version names, where it renamed the resource), under the request's own prefix; the header
 * form links to the bare path form.
 */
export function successorPath(match: ResourceMatch, path: string, version: number, successor: number): string {
  const rest = pathBelowVersion(match, path);
  const renamed = match.route.renamedIn.get(version);
  const there = renamed === undefined ? rest : (renamedPath(rest, { from: match.route.template, to: renamed }) ?? rest);
  return `${match.route.prefix}/v${successor}${encodeSegments(there)}`;
}
