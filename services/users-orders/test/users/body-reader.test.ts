import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { JSON_TYPE, testApp } from '../helpers.js';

const MiB = 1_048_576;

/** A valid CreateUserRequest whose UTF-8 encoding is exactly `bytes` long. */
function createBodyOfLength(bytes: number): string {
  const shell = '{"name":"","email":"e@example.com"}';
  return `{"name":"${'n'.repeat(bytes - shell.length)}","email":"e@example.com"}`;
}

async function post(payload: string | Buffer | undefined, headers: Record<string, string | undefined> = {}) {
  const app = await testApp();
  return app.inject({ method: 'POST', url: '/api/users', payload, headers });
}

function expectInvalidJson(res: Awaited<ReturnType<typeof post>>, details: string | RegExp): void {
  expect(res.statusCode).toBe(400);
  expect(res.headers['content-type']).toMatch(JSON_TYPE);
  const body = res.json<{ error: string; code: number; details: string }>();
  expect(body).toEqual({ error: 'invalid JSON', code: 400, details: expect.any(String) as string });
  if (typeof details === 'string') expect(body.details).toBe(details);
  else expect(body.details).toMatch(details);
}

describe('request body decoding: one JSON object, known fields, at most 1 MiB, any Content-Type', () => {
  it('accepts a body of exactly 1,048,576 bytes', async () => {
    const payload = createBodyOfLength(MiB);
    expect(Buffer.byteLength(payload)).toBe(MiB);
    const res = await post(payload);
    expect(res.statusCode).toBe(201);
  });

  it('rejects a body of 1,048,577 bytes with 400, never 413', async () => {
    const payload = createBodyOfLength(MiB + 1);
    expect(Buffer.byteLength(payload)).toBe(MiB + 1);
    expectInvalidJson(await post(payload), 'body exceeds 1048576 bytes');
  });

  it('counts bytes, not characters: 1 MiB + 1 byte of multi-byte UTF-8 is rejected', async () => {
    // "é" is two bytes and the shell is 35 bytes, so the total is exactly 1 MiB + 1 with ~half as many characters.
    const shell = '{"name":"","email":"e@example.com"}';
    const name = 'é'.repeat((MiB + 1 - shell.length) / 2);
    const payload = `{"name":"${name}","email":"e@example.com"}`;
    expect(Buffer.byteLength(payload)).toBe(MiB + 1);
    expectInvalidJson(await post(payload), 'body exceeds 1048576 bytes');
  });

  it('rejects an oversized body even when Content-Length claims nothing (chunked upload)', async () => {
    const app = await testApp();
    const res = await app.inject({
      method: 'POST',
      url: '/api/users',
      payload: Readable.from([Buffer.alloc(MiB, 0x20), Buffer.from('{}')]),
    });
    expectInvalidJson(res, 'body exceeds 1048576 bytes');
  });

  it('stops reading past the 16 MiB drain bound and closes the connection after the 400', async () => {
    const app = await testApp();
    const chunks = Array.from({ length: 17 }, () => Buffer.alloc(MiB, 0x20));
    const res = await app.inject({
      method: 'POST',
      url: '/api/users',
      payload: Readable.from([...chunks, Buffer.from('x')]),
    });
    expectInvalidJson(res, 'body exceeds 1048576 bytes');
    expect(res.headers.connection).toBe('close');
  });

  it.each([
    ['trailing data after the object', '{"name":"a","email":"b"} {"name":"c"}', /after JSON/],
    ['a trailing garbage character', '{"name":"a","email":"b"}x', /after JSON/],
    ['two concatenated objects', '{}{}', /after JSON/],
    ['truncated JSON', '{"name":"a"', /JSON/],
    ['not JSON at all', 'name=a&email=b', /JSON/],
    ['a single-quoted string', "{'name':'a'}", /JSON/],
  ])('rejects %s', async (_what, payload, details) => {
    expectInvalidJson(await post(payload), details);
  });

  it.each([
    ['an array', '[{"name":"a","email":"b"}]'],
    ['a string', '"a"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
  ])('rejects %s at the top level', async (_what, payload) => {
    expectInvalidJson(await post(payload), 'body must be a JSON object');
  });

  it.each([
    ['an unknown field', '{"name":"a","email":"b","admin":true}', 'unknown field "admin"'],
    ['a differently cased field', '{"Name":"a","email":"b"}', 'unknown field "Name"'],
    ['an id', '{"id":"user-7","name":"a","email":"b"}', 'unknown field "id"'],
    ['a __proto__ key', '{"__proto__":{"x":1},"name":"a","email":"b"}', 'unknown field "__proto__"'],
  ])('rejects %s', async (_what, payload, details) => {
    expectInvalidJson(await post(payload), details);
  });

  it.each([
    ['name', '{"name":null,"email":"b"}'],
    ['name', '{"name":1,"email":"b"}'],
    ['email', '{"name":"a","email":["b"]}'],
    ['email', '{"name":"a","email":{"v":"b"}}'],
    ['email', '{"name":"a","email":false}'],
  ])('rejects a non-string %s (%s) as undecodable, not as a validation failure', async (field, payload) => {
    expectInvalidJson(await post(payload), `field "${field}" must be a string`);
  });

  it.each([
    ['no body at all', undefined],
    ['an empty body', ''],
    ['only whitespace', ' \n\t '],
  ])('rejects %s', async (_what, payload) => {
    expectInvalidJson(await post(payload), 'body is empty');
  });

  it('rejects bytes that are not UTF-8', async () => {
    const payload = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","email":"b"}')]);
    expectInvalidJson(await post(payload), 'body is not valid UTF-8');
  });

  it('accepts trailing whitespace after the object', async () => {
    const res = await post('{"name":"a","email":"b"}\n \r\n\t');
    expect(res.statusCode).toBe(201);
  });

  it('takes the last value of a duplicated key, as JSON.parse and Go do', async () => {
    const res = await post('{"name":"first","name":"last","email":"b"}');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ name: 'last' });
  });

  it.each([
    ['missing', undefined],
    ['malformed', 'foo'],
    ['malformed with parameters', 'application/json; charset'],
    ['empty', ''],
    ['a form type (curl -d)', 'application/x-www-form-urlencoded'],
    ['plain text', 'text/plain'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['an unknown type', 'application/vnd.example+xml'],
  ])('decodes the body as JSON whatever the Content-Type (%s), never 415', async (_what, contentType) => {
    const ok = await post('{"name":"a","email":"b"}', { 'content-type': contentType });
    expect(ok.statusCode).toBe(201);
    const bad = await post('{"name":"a","email":"b"', { 'content-type': contentType });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'invalid JSON', code: 400 });
  });

  it('answers an oversized body with a malformed Content-Type 400, never 413 or 415', async () => {
    expectInvalidJson(await post(createBodyOfLength(2 * MiB), { 'content-type': 'foo' }), 'body exceeds 1048576 bytes');
  });
});
