import type { Pool } from 'undici';
import type { VersionEntry } from '../versions/policy-file.js';
import type { VersionPolicy } from '../versions/policy.js';
import { deriveDocument } from '../translation/derive-document.js';
import { buildMigrationGuide, withCallForms, type MigrationGuide } from './guide.js';
import { renderGuidePage } from './page.js';

/**
 * A guide as derived (the consumer reports read it) and in both representations, rendered once per policy and pair of
 * documents.
 */
interface RenderedGuide {
  readonly guide: MigrationGuide;
  readonly json: string;
  readonly html: string;
}

/** Why there is no guide: no such version or no successor (404), or the backend's documents could not be had. */
export type GuideOutcome =
  | { readonly ok: true; readonly rendered: RenderedGuide }
  | { readonly ok: false; readonly status: 404 | 502 | 504; readonly reason: string };

export interface MigrationGuides {
  /** The guide from `version` to its successor under `policy`, with the documents the backend serves now. */
  get(policy: VersionPolicy, version: number, requestId: string): Promise<GuideOutcome>;
}

/** undici's codes for a backend that did not answer in time (BACKEND_TIMEOUT_MS, or the connect cap). */
const TIMEOUT_CODES: ReadonlySet<unknown> = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

class DocumentUnavailable extends Error {
  constructor(
    readonly status: 502 | 504,
    message: string,
  ) {
    super(message);
  }
}

interface CachedGuide {
  readonly before: string;
  readonly after: string;
  readonly rendered: RenderedGuide;
}

/**
 * Migration guides from the backend's OpenAPI documents (`/v{n}/openapi.json`, fetched through the
 * gateway's backend pool on every request: they change when the backend is deployed) and the policy's
 * declarations; a version declared as changes gets the document derived from its successor's. Deriving and
 * rendering is cached per policy (a reload brings new dates) and kept while both documents are the same text.
 */
export function createMigrationGuides(pool: Pool): MigrationGuides {
  const cache = new WeakMap<VersionPolicy, Map<number, CachedGuide>>();

  const fetchDocument = async (version: number, requestId: string): Promise<string> => {
    let response;
    try {
      response = await pool.request({
        method: 'GET',
        path: `/v${version}/openapi.json`,
        headers: { accept: 'application/json', 'x-request-id': requestId },
      });
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new DocumentUnavailable(
        TIMEOUT_CODES.has(code) ? 504 : 502,
        `GET /v${version}/openapi.json failed: ${code ?? String(err)}`,
      );
    }
    let text: string;
    try {
      text = await response.body.text();
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new DocumentUnavailable(
        TIMEOUT_CODES.has(code) ? 504 : 502,
        `GET /v${version}/openapi.json broke off: ${code ?? String(err)}`,
      );
    }
    if (response.statusCode !== 200)
      throw new DocumentUnavailable(502, `GET /v${version}/openapi.json answered ${response.statusCode}`);
    return text;
  };

  /** A version's document from the text of the one its chain ends at: derived for a version declared as changes. */
  const documentOf = (policy: VersionPolicy, version: number, text: string): object => {
    let parsed: object;
    try {
      parsed = JSON.parse(text) as object;
    } catch {
      throw new DocumentUnavailable(502, 'an OpenAPI document is not JSON');
    }
    return deriveDocument(parsed, policy.translations.chain(version).steps);
  };

  const render = (
    policy: VersionPolicy,
    entry: VersionEntry,
    successor: number,
    before: string,
    after: string,
  ): RenderedGuide => {
    const documents = [documentOf(policy, entry.version, before), documentOf(policy, successor, after)] as const;
    const derived = buildMigrationGuide(entry.version, successor, ...documents, entry.changes, policy.resources);
    const guide = withCallForms(derived, policy.schemes, policy.resources);
    return { guide, json: JSON.stringify(guide), html: renderGuidePage(guide, entry) };
  };

  return {
    async get(policy, version, requestId) {
      const entry = policy.versions.find((listed) => listed.version === version);
      const successor = entry?.successor;
      if (entry === undefined || successor === undefined)
        return { ok: false, status: 404, reason: `version ${version} has no successor` };
      try {
        // A version declared as changes has no document at the backend: the one its chain ends at is fetched.
        const served = (listed: number) => policy.translations.chain(listed).served;
        const [before, after] = await Promise.all([
          fetchDocument(served(version), requestId),
          fetchDocument(served(successor), requestId),
        ]);
        let byVersion = cache.get(policy);
        if (byVersion === undefined) {
          byVersion = new Map();
          cache.set(policy, byVersion);
        }
        const cached = byVersion.get(version);
        if (cached?.before === before && cached.after === after) return { ok: true, rendered: cached.rendered };
        const rendered = render(policy, entry, successor, before, after);
        byVersion.set(version, { before, after, rendered });
        return { ok: true, rendered };
      } catch (err) {
        if (err instanceof DocumentUnavailable) return { ok: false, status: err.status, reason: err.message };
        throw err;
      }
    },
  };
}
