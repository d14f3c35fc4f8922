import { readFileSync } from 'node:fs';
import { compileErrors, validate } from '@readme/openapi-parser';
import type { OpenAPIV3_1 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { generateDocuments } from '../../services/users-orders/tools/openapi-snapshots.js';

const committed = (version: number): OpenAPIV3_1.Document =>
  JSON.parse(readFileSync(new URL(`../../openapi/v${version}.json`, import.meta.url), 'utf8')) as OpenAPIV3_1.Document;

describe('the API documents are valid OpenAPI 3.1 (@readme/openapi-parser)', () => {
  it.each([1, 2])('openapi/v%i.json', async (version) => {
    const result = await validate(committed(version));
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.specification).toBe('OpenAPI');
  });

  it('every document the backend generates', async () => {
    for (const [version, document] of await generateDocuments()) {
      const result = await validate(structuredClone(document) as OpenAPIV3_1.Document);
      expect(result.valid, `version ${version}: ${result.valid ? '' : compileErrors(result)}`).toBe(true);
    }
  });

  const usersOperations = (
    document: OpenAPIV3_1.Document,
  ): { get: OpenAPIV3_1.OperationObject; post: OpenAPIV3_1.OperationObject } => {
    const users = document.paths?.['/api/users'];
    if (users?.get === undefined || users.post === undefined) throw new Error('no /api/users operations');
    return { get: users.get, post: users.post };
  };

  it.each<[string, RegExp, (document: OpenAPIV3_1.Document) => void]>([
    [
      'a response without its description',
      /description/,
      (document) => {
        delete (usersOperations(document).get.responses as Record<string, Partial<OpenAPIV3_1.ResponseObject>>)['200']
          ?.description;
      },
    ],
    [
      'two operations with one operationId',
      /operationId/,
      (document) => {
        const { get, post } = usersOperations(document);
        post.operationId = get.operationId;
      },
    ],
  ])('rejects a copy with %s', async (_what, error, edit) => {
    const broken = committed(2);
    edit(broken);
    const result = await validate(broken);
    expect(result.valid).toBe(false);
    expect(result.valid ? '' : compileErrors(result)).toMatch(error);
  });
});
