import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  const paths = Object.entries(document.paths as Json).filter(
    ([path]) => !VERSIONED_PATH.test(path) || ORDER_PATH.test(path),
  );
  // The description and tags name what the document holds, as the backend writes them for these paths alone.
  const used = new Set(
    paths.flatMap(([, item]) => Object.values(item as Json).flatMap((operation) => (operation as Json).tags ?? [])),
  );
  return {
    ...document,
    info: {
      ...(document.info as Json),
      description:
        `Major version ${version}: users (unversioned, the same in every version) and the version ${version} ` +
        `representation of orders at /v${version}/orders/{id} and /api/v${version}/orders/{id}.`,
    },
    paths: Object.fromEntries(paths),
    tags: (document.tags as { name: string }[]).filter(({ name }) => used.has(name)),
  };
}

/**
 * A backend that publishes the orders' documents (`ordersDocument`) at `/v{n}/openapi.json`, or answers what a
 * test sets; any other path is a 200 `{}` (a resource the gateway forwards).
 */
export interface DocumentBackend {
  url: string;
  documents: Map<string, string>;
  seen: { url: string; headers: IncomingHttpHeaders }[];
  /** Answer nothing (the gateway's timeout). */
  silent: boolean;
  close(): Promise<void>;
}

export async function startDocumentBackend(): Promise<DocumentBackend> {
  const backend = {
    documents: new Map([1, 2].map((version) => [`/v${version}/openapi.json`, JSON.stringify(ordersDocument(version))])),
    seen: [],
    silent: false,
  } as unknown as DocumentBackend;
  const server: Server = createServer((req, res) => {
    backend.seen.push({ url: req.url ?? '', headers: req.headers });
    if (backend.silent) return;
    const document = backend.documents.get(req.url ?? '');
    if (document === undefined && !(req.url ?? '').endsWith('/openapi.json'))
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    else if (document === undefined)
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found","code":404}');
    else res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(document);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  backend.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  backend.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return backend;
}
