import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ordersDocument, startDocumentBackend, type DocumentBackend } from '../../gateway/test/support/documents.js';
import { ORDERS_V1_CHANGES } from '../../gateway/test/support/orders-v1.js';
import { consumerWithKey, createMemoryConsumerStore } from '../../gateway/test/support/memory-store.js';
import { buildTestGateway, designPolicyFile } from '../../gateway/test/support/helpers.js';
import { repoRoot } from '../../scripts/paths.mjs';

// Spectral (`spectral:oas`, .spectral.yaml) and Redocly CLI (`recommended`, redocly.yaml) on the committed documents
// and on what the gateway serves from them (docs/decisions.md#openapi-linting-spectral-and-redocly): no error and no
// warning but those the configs turn off, with the reason there.

const bin = (name: string): string => join(repoRoot, 'node_modules', '.bin', name);
/** Neither tool may reach the network: no usage data, no update check. */
const OFFLINE = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_UPDATE_NOTIFIER: '1',
};

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: repoRoot, env: OFFLINE, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      // Both exit non-zero when they find errors; their JSON on stdout says which.
      if (stdout.trim() === '' && err !== null) reject(new Error(`${command} failed: ${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Spectral's findings, one line each (`file path: rule: message`), of every severity. */
async function spectral(files: readonly string[]): Promise<string[]> {
  const out = await run(bin('spectral'), [
    'lint',
    '--ruleset',
    '.spectral.yaml',
    '--format',
    'json',
    '--fail-severity',
    'hint',
    '--quiet',
    ...files,
  ]);
  const start = out.indexOf('[');
  const results = JSON.parse(out.slice(start)) as { code: string; message: string; path: string[]; source: string }[];
  return results.map((result) => `${result.source} ${result.path.join('.')}: ${result.code}: ${result.message}`);
}

/** Redocly's findings, one line each, errors and warnings alike. */
async function redocly(files: readonly string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const file of files) {
    const out = await run(bin('redocly'), ['lint', '--config', 'redocly.yaml', '--format', 'json', file]);
    const report = JSON.parse(out.slice(out.indexOf('{'))) as {
      problems: { ruleId: string; message: string; severity: string }[];
    };
    lines.push(
      ...report.problems.map((problem) => `${file}: ${problem.severity} ${problem.ruleId}: ${problem.message}`),
    );
  }
  return lines;
}

const committed = ['openapi/v1.json', 'openapi/v2.json'];

describe('the committed OpenAPI documents pass both linters', () => {
  it('Spectral spectral:oas', async () => {
    expect(await spectral(committed)).toEqual([]);
  });

  it('Redocly recommended', async () => {
    expect(await redocly(committed)).toEqual([]);
  });
});

describe('the OpenAPI documents the gateway serves pass both linters', () => {
  let backend: DocumentBackend;
  const served: string[] = [];

  /** `url` as a gateway on `policy` serves it, in a file of its own. */
  async function serve(name: string, policy: object, url: string): Promise<void> {
    const store = createMemoryConsumerStore();
    const { key } = await consumerWithKey(store, 'acme');
    const gateway = await buildTestGateway(backend.url, { policy, consumerStore: store });
    try {
      const res = await gateway.app.inject({ url, headers: { 'api-key': key } });
      expect(res.statusCode).toBe(200);
      const file = join(dir, `${name}.json`);
      writeFileSync(file, res.body);
      served.push(file);
    } finally {
      await gateway.app.close();
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'served-openapi-'));

  beforeAll(async () => {
    backend = await startDocumentBackend();
    const [v1, v2] = designPolicyFile.versions as unknown as [Record<string, unknown>, Record<string, unknown>];
    // Deprecated, and requiring a key: every annotation the gateway makes.
    await serve(
      'v1-deprecated-key-required',
      { ...designPolicyFile, versions: [{ ...v1, consumer_key: 'required' }, v2] },
      '/v1/openapi.json',
    );
    await serve('v2-current', designPolicyFile, '/v2/openapi.json');
    // Declared as changes, the backend answering with version 2's document: derived, then annotated.
    backend.documents.set('/v1/openapi.json', JSON.stringify(ordersDocument(2)));
    await serve(
      'v1-derived',
      { ...designPolicyFile, versions: [{ ...v1, changes: ORDERS_V1_CHANGES }, v2] },
      '/v1/openapi.json',
    );
  }, 60_000);
  afterAll(async () => {
    await backend.close();
  });

  it('Spectral spectral:oas', async () => {
    expect(await spectral(served)).toEqual([]);
  });

  it('Redocly recommended', async () => {
    expect(await redocly(served)).toEqual([]);
  });
});
