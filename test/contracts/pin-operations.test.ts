import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type formatsPlugin from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  TODAY,
  V1_SUNSET,
  buildTestGateway,
  designPolicyFile,
  type TestGateway,
} from '../../gateway/test/support/helpers.js';
import { startStubBackend, type StubBackend } from '../../gateway/test/support/stub-backend.js';

// The consumer's pin operations (docs/consumers.md#pins) as the committed documents describe them, and every answer
// the gateway gives them, refusals included, held against that description: its status is one the operation lists,
// its body matches the schema documented for that status, and its documented headers are there. The linters'
// verdict on the same documents is test/contracts/openapi-lint.test.ts's.

type Document = OpenAPIV3_1.Document;
type Method = 'GET' | 'PUT' | 'POST';

const committed = (version: number): Document =>
  JSON.parse(readFileSync(new URL(`../../openapi/v${version}.json`, import.meta.url), 'utf8')) as Document;
const document = committed(2);

// ajv-formats is CommonJS; require() gives the plugin function under both Node and vitest's interop.
const addFormats = createRequire(import.meta.url)('ajv-formats') as typeof formatsPlugin.default;
// The document's own keywords (`example`) are no JSON Schema's: not strict.
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

const OPERATIONS = [
  ['GET', '/consumer'],
  ['PUT', '/consumer/version'],
  ['POST', '/consumer/version/rollback'],
] as const;

function operationOf(method: Method, path: string): OpenAPIV3_1.OperationObject {
  const lower = method.toLowerCase() as 'get' | 'put' | 'post';
  const operation = document.paths?.[path]?.[lower];
  if (operation === undefined) throw new Error(`${method} ${path} is not documented`);
  return operation;
}

/** A `#/components/…` reference followed to what it names. */
function resolved<T>(node: unknown): T {
  const target = (node as { $ref?: string }).$ref;
  if (target === undefined) return node as T;
  const found = target
    .slice(2)
    .split('/')
    .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], document);
  return resolved<T>(found);
}

/** Asserts the answer is one the operation documents: its status (not only `default`), body and headers. */
function expectDocumented(method: Method, path: string, res: LightMyRequestResponse): void {
  const responses = operationOf(method, path).responses ?? {};
  const status = String(res.statusCode);
  expect(Object.keys(responses), `${method} ${path} ${status}`).toContain(status);
  const response = resolved<OpenAPIV3_1.ResponseObject>(responses[status]);
  const schema = response.content?.['application/json']?.schema;
  expect(schema, `${method} ${path} ${status} documents its JSON body`).toBeDefined();
  const validate = ajv.compile({ ...schema, components: document.components });
  expect(validate(res.json()), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const values = resolved<{ schema: { enum: unknown[] } }>(header).schema.enum.map(String);
    expect(values, `${method} ${path} ${status} ${name}`).toContain(res.headers[name.toLowerCase()]);
  }
}

describe('the committed documents describe the consumer’s pin operations', () => {
  it('in every version the same: the three operations, with the key required and every status they answer', () => {
    const parts = (of: Document) => ({
      paths: OPERATIONS.map(([, path]) => of.paths?.[path]),
      components: of.components?.responses,
    });
    expect(parts(committed(1))).toEqual(parts(document));
    const statuses = Object.fromEntries(
      OPERATIONS.map(([method, path]) => [
        `${method} ${path}`,
        Object.keys(operationOf(method, path).responses ?? {}).sort(),
      ]),
    );
    expect(statuses).toEqual({
      'GET /consumer': ['200', '401', '503', 'default'],
      'PUT /consumer/version': ['200', '400', '401', '403', '422', '429', '503', 'default'],
      'POST /consumer/version/rollback': ['200', '401', '403', '409', '422', '429', '503', 'default'],
    });
    for (const [method, path] of OPERATIONS) {
      const operation = operationOf(method, path);
      expect(operation.security).toEqual([{ ApiKey: [] }]);
      expect(operation.tags).toEqual(['consumer']);
      expect(operation.responses?.['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
      expect(operation.responses?.['200']).toEqual({ $ref: '#/components/responses/ConsumerPin' });
    }
    expect(operationOf('PUT', '/consumer/version').requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/PinRequest' } } },
    });
    expect(document.tags?.map(({ name }) => name)).toContain('consumer');
  });

  it('names each refusal’s exact error texts', () => {
    const errors = (method: Method, path: string, status: string): unknown[] => {
      const response = resolved<OpenAPIV3_1.ResponseObject>(operationOf(method, path).responses?.[status]);
      const schema = resolved<{ anyOf?: unknown[]; properties?: { error: { enum: string[] } } }>(
        response.content?.['application/json']?.schema,
      );
      const branches = (schema.anyOf ?? [schema]).map((branch) =>
        resolved<{ properties: { error: { enum: string[] } } }>(branch),
      );
      return branches.flatMap((branch) => branch.properties.error.enum);
    };
    expect(errors('PUT', '/consumer/version', '400')).toEqual(['invalid JSON']);
    expect(errors('PUT', '/consumer/version', '403')).toEqual(['version closed to new consumers']);
    expect(errors('PUT', '/consumer/version', '422')).toEqual(['validation failed', 'unsupported version']);
    expect(errors('POST', '/consumer/version/rollback', '409')).toEqual([
      'nothing to roll back',
      'rollback window closed',
      'pin changed meanwhile',
    ]);
    expect(errors('POST', '/consumer/version/rollback', '422')).toEqual(['unsupported version']);
    expect(errors('GET', '/consumer', '503')).toEqual(['storage unavailable', 'service unavailable']);
  });
});

describe('every answer of the gateway’s pin operations is one the documents describe', () => {
  const HOUR = 3_600_000;
  let stub: StubBackend;
  let gateway: TestGateway | undefined;
  let admin: FastifyInstance;

  beforeAll(async () => {
    stub = await startStubBackend();
  });
  afterAll(async () => {
    await stub.close();
  });
  afterEach(async () => {
    await gateway?.app.close();
    gateway = undefined;
  });

  /** A gateway, and a consumer registered there pinned to `version` with its key. */
  async function consumerPinnedTo(version: number, now = TODAY): Promise<string> {
    gateway = await buildTestGateway(stub.url, { now });
    admin = await gateway.admin();
    expect(
      (await admin.inject({ method: 'POST', url: '/consumers', payload: { name: 'Acme', version } })).statusCode,
    ).toBe(201);
    return (await admin.inject({ method: 'POST', url: '/consumers/acme/keys' })).json<{ key: string }>().key;
  }
  /** The call, held against its documentation; its status for the test to check. */
  async function call(method: Method, path: string, key: string | undefined, payload?: string): Promise<number> {
    const headers = key === undefined ? {} : { 'api-key': key };
    const res = await (gateway as TestGateway).app.inject({ method, url: path, headers, payload });
    expectDocumented(method, path, res);
    return res.statusCode;
  }

  it('200 to each, 400, 422 validation failed and unsupported version, and 401 without a valid key', async () => {
    const key = await consumerPinnedTo(1);
    expect(await call('GET', '/consumer', key)).toBe(200);
    expect(await call('PUT', '/consumer/version', key, '{"version":2}')).toBe(200);
    expect(await call('POST', '/consumer/version/rollback', key)).toBe(200);
    expect(await call('PUT', '/consumer/version', key, '{"version":')).toBe(400);
    expect(await call('PUT', '/consumer/version', key, '{}')).toBe(422);
    expect(await call('PUT', '/consumer/version', key, '{"version":9}')).toBe(422);
    for (const [method, path] of OPERATIONS) {
      expect(await call(method, path, undefined, '{"version":2}')).toBe(401);
      expect(await call(method, path, 'vr_nope', '{"version":2}')).toBe(401);
    }
  });

  it('409 nothing to roll back, rollback window closed and pin changed meanwhile', async () => {
    const key = await consumerPinnedTo(1);
    expect(await call('POST', '/consumer/version/rollback', key)).toBe(409);
    expect(await call('PUT', '/consumer/version', key, '{"version":2}')).toBe(200);
    gateway?.setNow(TODAY + 72 * HOUR + 1);
    expect(await call('POST', '/consumer/version/rollback', key)).toBe(409);
    gateway?.setNow(TODAY);
    const store = (gateway as TestGateway).consumerStore;
    const pinOf = store.pinOf.bind(store);
    // Another replica's rollback lands right after this one read the pin.
    store.pinOf = async (id) => {
      const read = await pinOf(id);
      await store.rollBackPin(id, { pinned_version: 2, previous_version: 1 }, TODAY, TODAY);
      return read;
    };
    expect(await call('POST', '/consumer/version/rollback', key)).toBe(409);
  });

  it('403 closed to new consumers, to a move and to a rollback; 422 to a rollback to a removed version', async () => {
    const key = await consumerPinnedTo(2);
    expect(await call('PUT', '/consumer/version', key, '{"version":1}')).toBe(200);
    expect(await call('PUT', '/consumer/version', key, '{"version":2}')).toBe(200);
    const [v1, v2] = designPolicyFile.versions;
    const closed = { ...v1, consumer_key: 'required', closed_to_new: '2026-09-01' };
    gateway?.setNextPolicy({ ...designPolicyFile, versions: [closed, v2] });
    expect((await admin.inject({ method: 'POST', url: '/-/reload' })).statusCode).toBe(200);
    expect(await call('PUT', '/consumer/version', key, '{"version":1}')).toBe(403);
    expect(await call('POST', '/consumer/version/rollback', key)).toBe(403);
    await gateway?.app.close();

    const early = await consumerPinnedTo(1, V1_SUNSET - HOUR);
    expect(await call('PUT', '/consumer/version', early, '{"version":2}')).toBe(200);
    gateway?.setNow(V1_SUNSET);
    expect(await call('POST', '/consumer/version/rollback', early)).toBe(422);
  });

  it('503 with Retry-After from each while the store is down', async () => {
    const key = await consumerPinnedTo(1);
    (gateway as TestGateway).consumerStore.down = true;
    expect(await call('GET', '/consumer', key)).toBe(503);
    expect(await call('PUT', '/consumer/version', key, '{"version":2}')).toBe(503);
    expect(await call('POST', '/consumer/version/rollback', key)).toBe(503);
  });
});
