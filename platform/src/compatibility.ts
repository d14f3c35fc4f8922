import { apiDiff, type Diff } from 'api-smart-diff';

/**
 * How a change of an API document affects the clients of that version. Breaking (a new major version is
 * required): a removed or renamed response field, an optional field made required, a changed field type
 * or date format, a changed status or error text of an existing scenario, a removed endpoint or response
 * header, a new required request field or parameter, stricter validation. Compatible: an added optional
 * response field, endpoint, optional query parameter or header, relaxed validation, and documentation
 * text (descriptions, summaries, examples).
 */
export type Compatibility = 'breaking' | 'non-breaking';

type Path = Diff['path'];

export interface ContractChange {
  compatibility: Compatibility;
  /** What changed, in words, e.g. "[Removed] property `total` in Response 200 content (application/json)". */
  description: string;
  /** Where, as a JSON path into the document, e.g. "paths./v1/orders/{id}.get.responses.200…". */
  path: string;
  /** The same place as keys (a key may hold dots: `/v1/openapi.json`), for readers that group changes by operation. */
  at: Path;
  action: Diff['action'];
  /** The added value, else the value removed or replaced (a required field's name, a parameter). */
  value: unknown;
  /** Text for people only (descriptions, summaries, titles, examples): nothing a client's code depends on. */
  documentation: boolean;
}

/**
 * `paths.{p}.{method}.responses.{status}.content.{type}.schema…`: the position inside a response body schema, if any.
 */
function responseSchemaPosition(path: Path): { status: string; inSchema: Path } | undefined {
  if (path[0] !== 'paths' || path[3] !== 'responses' || path[5] !== 'content' || path[7] !== 'schema') return undefined;
  return { status: String(path[4]), inSchema: path.slice(8) };
}

function valueAt(document: unknown, path: Path): unknown {
  let node = document;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

/** Where the list above is stricter than api-smart-diff's own rules; undefined keeps the library's verdict. */
function stricterVerdict(diff: Diff, before: unknown): Compatibility | undefined {
  const last = diff.path.at(-1);
  const parent = diff.path.at(-2);
  // A changed type is breaking wherever it is (the library calls some response type changes compatible).
  if (diff.action === 'replace' && last === 'type') return 'breaking';
  const response = responseSchemaPosition(diff.path);
  if (response === undefined) return undefined;
  // An existing optional response field made required (a brand-new required field is only an addition).
  if (diff.action === 'add' && parent === 'required' && typeof diff.after === 'string') {
    const schemaPath = diff.path.slice(0, -2);
    return valueAt(before, [...schemaPath, 'properties', diff.after]) === undefined ? undefined : 'breaking';
  }
  // A changed date (or any value) format of a response field.
  if (diff.action === 'replace' && last === 'format') return 'breaking';
  // The error text or code of an existing error scenario (a fixed `error`/`code`, or a fixed plain-text
  // body): clients branch on them.
  const isError = response.status === 'default' || Number(response.status) >= 400;
  const [first, field, keyword] = response.inSchema;
  const isFixedValue = (key: unknown): boolean => key === 'enum' || key === 'const';
  const fixedErrorValue =
    isFixedValue(first) || (first === 'properties' && (field === 'error' || field === 'code') && isFixedValue(keyword));
  if (isError && fixedErrorValue && diff.action !== 'add') return 'breaking';
  return undefined;
}

/** Media-type examples illustrate, and tags group operations for readers; neither is part of the contract. */
function isIllustration(path: Path): boolean {
  return path[0] === 'tags' || path.includes('example') || path.includes('examples');
}

const PROSE_KEYS: ReadonlySet<unknown> = new Set(['description', 'summary', 'title']);

/** Prose, an example or a tag (a property that happens to be named `description` is a field, not prose). */
function isDocumentation(diff: Diff): boolean {
  const last = diff.path.at(-1);
  return (
    diff.type === 'annotation' ||
    isIllustration(diff.path) ||
    (PROSE_KEYS.has(last) && diff.path.at(-2) !== 'properties')
  );
}

function verdict(diff: Diff, before: unknown): Compatibility {
  const stricter = stricterVerdict(diff, before);
  if (stricter !== undefined) return stricter;
  switch (diff.type) {
    case 'breaking':
      return 'breaking';
    case 'non-breaking':
    case 'annotation':
    case 'deprecated':
      return 'non-breaking';
    case 'unclassified':
      // What the library cannot classify is treated as breaking until a person has looked at it.
      return isIllustration(diff.path) ? 'non-breaking' : 'breaking';
  }
}

/**
 * Every difference between two OpenAPI 3.x documents, each classified: two builds of one version (the
 * contracts gate) or a version and its successor (the gateway's migration guide).
 */
export function compareDocuments(before: object, after: object): ContractChange[] {
  return apiDiff(before, after).map((diff) => ({
    compatibility: verdict(diff, before),
    description:
      diff.description ??
      `[${diff.action}] ${JSON.stringify(diff.before ?? null)} → ${JSON.stringify(diff.after ?? null)}`,
    path: diff.path.join('.'),
    at: diff.path,
    action: diff.action,
    value: (diff.action === 'add' ? diff.after : diff.before) as unknown,
    documentation: isDocumentation(diff),
  }));
}
