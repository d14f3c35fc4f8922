import type { RequestSchemes } from './schemes.js';

/**
 * How a request named its version (docs/behaviour.md#version-schemes): a scheme, its consumer's pin, or none
 * (default_version); the ledger records it for a request on a bare path.
 */
export const CALL_FORMS = ['path', 'header', 'query', 'media_type', 'pin', 'default'] as const;

export type CallForm = (typeof CALL_FORMS)[number];

/** One operation as a client calls it on the version it leaves, and what it sends instead for the successor. */
export interface CallOfForm {
  /** null: a ledger row written before the form was recorded (a bare path naming the version some way). */
  form: CallForm | null;
  /** `GET /orders/{id} with API-Version: 1` */
  call: string;
  /** `GET /orders/{id} with API-Version: 2`; null when the version has no successor. */
  instead: string | null;
}

/** The operation on one versioned resource: its method and template without a version (`/orders/{id}`). */
export interface BareOperation {
  method: string;
  /** The path without its version segment, OpenAPI-spelled: `/orders/{id}`. */
  template: string;
  /** '' or '/api': the path form's prefix (the other forms have none). */
  prefix: string;
  /** Where the successor serves it, when a `path` change renamed it (`/users/{id}`); else the same template. */
  successorTemplate?: string;
}

/**
 * The call in `form` naming `version`, the same words in the migration guide, `GET /deprecations` and the notices.
 * A form that names no version says so and which version it got.
 */
function callText(
  form: CallForm | null,
  { method, template, prefix }: BareOperation,
  version: number,
  schemes: RequestSchemes,
): string {
  const bare = `${method} ${template}`;
  switch (form) {
    case 'path':
      return `${method} ${prefix}/v${version}${template}`;
    case 'header':
      return `${bare} with API-Version: ${version}`;
    case 'query':
      return `${bare}?${schemes.queryParameter}=${version}`;
    case 'media_type':
      return `${bare} with Accept: ${schemes.mediaTypeOf(String(version))}`;
    case 'pin':
      return `${bare} naming no version (your pin: v${version})`;
    case 'default':
      return `${bare} naming no version (default_version: v${version})`;
    case null:
      return `${bare} (how it named v${version} was not recorded)`;
  }
}

/**
 * What to send for the successor. A scheme's call keeps its form; a call that named no version names the
 * successor the first way the policy reads (header, path, query, media type: a bare path stays a bare path where
 * it can), and a pinned consumer may move its pin instead.
 */
function insteadText(
  form: CallForm | null,
  operation: BareOperation,
  successor: number,
  schemes: RequestSchemes,
): string {
  const there = { ...operation, template: operation.successorTemplate ?? operation.template };
  if (form !== 'pin' && form !== 'default' && form !== null) return callText(form, there, successor, schemes);
  const named: CallForm = schemes.header ? 'header' : schemes.path ? 'path' : schemes.query ? 'query' : 'media_type';
  const naming = callText(named, there, successor, schemes);
  return form === 'pin' ? `${naming}, or move your pin: PUT /consumer/version {"version": ${successor}}` : naming;
}

export function callOfForm(
  form: CallForm | null,
  operation: BareOperation,
  version: number,
  successor: number | null,
  schemes: RequestSchemes,
): CallOfForm {
  return {
    form,
    call: callText(form, operation, version, schemes),
    instead: successor === null ? null : insteadText(form, operation, successor, schemes),
  };
}

/** `/orders/:id` and `/orders/{orderId}` alike: a parameter's name is no part of what a client calls. */
const unnamed = (template: string): string => template.replace(/:[A-Za-z0-9_]+|\{[^}]*\}/g, '{}');

/**
 * The forms a client can call a migration guide's operation in under the policy: the path form, and for the
 * bare path form of a versioned resource (`/v1/orders/{id}`, not `/api/v1/…`) the header, query and media type
 * forms the policy reads. None for a path that is no versioned resource (`/api/users`) or a path item's shared
 * part (method `*`).
 */
export function guideCallForms(
  method: string,
  { path, successorPath }: { path: string; successorPath: string },
  version: number,
  successor: number,
  schemes: RequestSchemes,
  resources: readonly string[],
): CallOfForm[] {
  const match = new RegExp(`^(/api)?/v${version}(/.*)$`).exec(path);
  if (match === null || method === '*') return [];
  const there = new RegExp(`^(?:/api)?/v${successor}(/.*)$`).exec(successorPath)?.[1];
  const operation = {
    method,
    template: match[2] as string,
    prefix: match[1] ?? '',
    ...(there === undefined || there === match[2] ? {} : { successorTemplate: there }),
  };
  if (!resources.some((resource) => unnamed(resource) === unnamed(operation.template))) return [];
  const forms: CallForm[] = [];
  if (schemes.path) forms.push('path');
  if (operation.prefix === '') {
    if (schemes.header) forms.push('header');
    if (schemes.query) forms.push('query');
    if (schemes.mediaType) forms.push('media_type');
  }
  return forms.map((form) => callOfForm(form, operation, version, successor, schemes));
}
