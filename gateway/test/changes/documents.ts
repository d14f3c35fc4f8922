import { readFileSync } from 'node:fs';

type Json = Record<string, unknown>;

/** `/v{n}/…` or `/api/v{n}/…`: a path of one version; every other path is the same in every version. */
const VERSIONED_PATH = /^(?:\/api)?\/v[0-9]+\//;
const ORDER_PATH = /^(?:\/api)?\/v[0-9]+\/orders\//;

/** The committed document of a version (openapi/v{n}.json), as the backend publishes it. */
export function committedDocument(version: number): Json {
  return JSON.parse(readFileSync(new URL(`../../../openapi/v${version}.json`, import.meta.url), 'utf8')) as Json;
}

/**
 * The tests' own fixture: the committed document of a version with, of its versioned paths, the orders' only.
 * What it holds is known (the orders' representation change from v1 to v2, and the users, which are the same
 * in every version), so a test can spell out the guide's operations and counts, and they stay true when
 * the backend serves another resource (docs/architecture.md "Adding a resource").
 */
export function ordersDocument(version: number): Json {
  const document = committedDocument(version);
  const paths = Object.entries(document.paths as Json).filter(([path]) => !VERSIONED_PATH.test(path) || ORDER_PATH.test(path));
  return { ...document, paths: Object.fromEntries(paths) };
}
