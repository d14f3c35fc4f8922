/**
 * Resource templates of the version policy (`/orders/:id`): their syntax, and whether two of the
 * gateway's routes could answer the same path (docs/routing.md#resource-templates).
 */

/** What a resource is served at when the policy file names none. */
export const DEFAULT_RESOURCES: readonly string[] = ['/orders/:id', '/openapi.json'];

/**
 * A resource the policy lists: its template, and the versions that have it (`{"path": "/clients/:id", "versions":
 * [1]}`); a plain string in the file is in every version (docs/routing.md#resource-templates).
 */
export interface ListedResource {
  readonly path: string;
  /** Undefined: every version has it. */
  readonly versions: readonly number[] | undefined;
}

export const isListedFor = (resource: ListedResource, version: number): boolean =>
  resource.versions === undefined || resource.versions.includes(version);

/** A template's parameter names (`/orders/:id` → `id`). */
export const templateParameters = (template: string): string[] =>
  template
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1));

/** A static segment is URL-safe text; a parameter is `:name`. No wildcards, no empty segments. */
const STATIC_SEGMENT = /^[A-Za-z0-9._~-]+$/;
const PARAM_SEGMENT = /^:[A-Za-z_][A-Za-z0-9_]*$/;
const VERSION_SEGMENT = /^v\d+$/;

type Segment =
  | { readonly kind: 'static'; readonly text: string }
  | { readonly kind: 'param' }
  /** `v{n}`: the version segment of a path form. */
  | { readonly kind: 'version' }
  /** Everything below this point (a proxy prefix such as `/api/users/*`). */
  | { readonly kind: 'rest' };

/** Why a template is not acceptable, or undefined when it is. */
export function templateProblem(template: string): string | undefined {
  if (!template.startsWith('/')) return 'must be a path starting with "/"';
  const segments = template.slice(1).split('/');
  for (const segment of segments) {
    if (!STATIC_SEGMENT.test(segment) && !PARAM_SEGMENT.test(segment)) {
      return `segment "${segment}" must be URL-safe text (letters, digits, . _ ~ -) or a :parameter`;
    }
  }
  return undefined;
}

function segmentsOf(template: string): Segment[] {
  return template
    .slice(1)
    .split('/')
    .map((text): Segment => {
      if (text === '*') return { kind: 'rest' };
      if (text === 'v:version') return { kind: 'version' };
      return text.startsWith(':') ? { kind: 'param' } : { kind: 'static', text };
    });
}

function segmentsOverlap(a: Segment, b: Segment): boolean {
  if (a.kind === 'param' || b.kind === 'param') return true;
  if (a.kind === 'static' && b.kind === 'static') return a.text === b.text;
  if (a.kind === 'version' && b.kind === 'version') return true;
  const fixed = a.kind === 'static' ? a : b.kind === 'static' ? b : undefined;
  return fixed !== undefined && VERSION_SEGMENT.test(fixed.text);
}

/** True when some request path would match both route templates (`v:version`, `:param`, trailing `*`). */
function routesOverlap(first: string, second: string): boolean {
  const a = segmentsOf(first);
  const b = segmentsOf(second);
  for (let i = 0; ; i++) {
    const left = a[i];
    const right = b[i];
    if (left?.kind === 'rest' || right?.kind === 'rest') return true;
    if (left === undefined || right === undefined) return left === right;
    if (!segmentsOverlap(left, right)) return false;
  }
}

/** The three forms a resource is served at: header form, path form, path form under `/api`. */
export function routeFormsOf(resource: string): readonly string[] {
  return [resource, `/v:version${resource}`, `/api/v:version${resource}`];
}

/** Routes the gateway serves itself, which no resource may shadow. */
const RESERVED_ROUTES: readonly string[] = ['/api/users', '/api/users/*', '/versions', '/versions/:version/changes'];

/**
 * The first reserved route or earlier resource that a resource's forms would collide with, as text
 * for an error message, or undefined. Two resources collide when one path could reach both.
 */
export function collisionOf(resource: string, earlier: readonly string[]): string | undefined {
  const forms = routeFormsOf(resource);
  for (const reserved of RESERVED_ROUTES) {
    if (forms.some((form) => routesOverlap(form, reserved))) return reserved.replace('/*', '');
  }
  for (const other of earlier) {
    const otherForms = routeFormsOf(other);
    if (forms.some((form) => otherForms.some((otherForm) => routesOverlap(form, otherForm))))
      return `resource "${other}"`;
  }
  return undefined;
}
