import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { startProcessStack, type ProcessStack } from '../e2e/process-stack.js';

// Inside node_modules so the generated client resolves openapi-fetch like any code of the repository would.
const out = join(repoRoot, 'node_modules', '.cache', 'openapi-client-test');

/** What a client of version 2 writes against the generated types: a typed call, no hand-written shapes. */
const clientSource = `import createClient from 'openapi-fetch';
import type { paths } from './v2.mjs';

export interface OrderSummary {
  customerId: string;
  totalCents: number;
  currency: string;
}

export async function readOrder(baseUrl: string, id: string): Promise<OrderSummary> {
  const client = createClient<paths>({ baseUrl });
  const { data, error, response } = await client.GET('/v2/orders/{id}', { params: { path: { id } } });
  if (data === undefined) throw new Error(\`\${response.status} \${JSON.stringify(error)}\`);
  return { customerId: data.customer_id, totalCents: data.total_cents, currency: data.currency };
}
`;

/** The same call reading version 1's fields from a version 2 order: the generated types must refuse it. */
const wrongClientSource =
  `import createClient from 'openapi-fetch';
import type { paths } from './v2.mjs';

export async function readTotal(baseUrl: string): Promise<number> {
  const { data } = await createClient<paths>({ baseUrl }).GET('/v2/orders/{id}', { params: { path: { id: 'ord-1001' ` +
  `} } });
  return data === undefined ? 0 : data.total;
}
`;

function compile(files: string[], emit: boolean): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    skipLibCheck: true,
    outDir: out,
    noEmit: !emit,
  });
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...(emit ? program.emit().diagnostics : [])];
  return diagnostics.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

describe('a TypeScript client generated from openapi/v2.json (openapi-typescript + openapi-fetch)', () => {
  let stack: ProcessStack;

  beforeAll(async () => {
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const types = astToString(await openapiTS(pathToFileURL(join(repoRoot, 'openapi', 'v2.json'))));
    writeFileSync(join(out, 'v2.mts'), types);
    writeFileSync(join(out, 'client.mts'), clientSource);
    writeFileSync(join(out, 'wrong-client.mts'), wrongClientSource);
    stack = await startProcessStack();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('type-checks a call of GET /v2/orders/{id}', () => {
    expect(compile([join(out, 'client.mts')], true)).toEqual([]);
  });

  it('refuses, at type-check time, a version 1 field on a version 2 order', () => {
    expect(compile([join(out, 'wrong-client.mts')], false)).toEqual([
      expect.stringMatching(/^Property 'total' does not exist on type/),
    ]);
  });

  it('reads customer_id, total_cents and currency through the running gateway', async () => {
    const { readOrder } = (await import(pathToFileURL(join(out, 'client.mjs')).href)) as {
      readOrder: (baseUrl: string, id: string) => Promise<{ customerId: string; totalCents: number; currency: string }>;
    };
    await expect(readOrder(stack.gatewayUrl, 'ord-1001')).resolves.toEqual({
      customerId: 'user-1',
      totalCents: 1999,
      currency: 'EUR',
    });
    await expect(readOrder(stack.gatewayUrl, 'ord-9999')).rejects.toThrow('404 {"error":"order not found","code":404}');
  });
});
