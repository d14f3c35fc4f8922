import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
  gateway = undefined;
});

/** The test gateway's admin listener: no backend is needed for the registry. */
async function admin(options: Parameters<typeof buildTestGateway>[1] = {}): Promise<FastifyInstance> {
  gateway = await buildTestGateway('http://127.0.0.1:9', options);
  return gateway.admin();
}

const post = (app: FastifyInstance, url: string, body?: unknown) =>
  app.inject({
    method: 'POST',
    url,
    ...(body === undefined
      ? {}
      : {
          payload: typeof body === 'string' ? body : JSON.stringify(body),
          headers: { 'content-type': 'application/json' },
        }),
  });

const KEY = /^vr_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/;

describe('POST /consumers', () => {
  it('registers a consumer under the slug of its name: 201, Location, the record and no keys yet', async () => {
    const app = await admin();
    const res = await post(app, '/consumers', { name: 'Acme Billing (EU)', contact_email: 'billing@acme.example' });
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toBe('/consumers/acme-billing-eu');
    expect(res.json()).toEqual({
      id: 'acme-billing-eu',
      name: 'Acme Billing (EU)',
      contact_email: 'billing@acme.example',
      webhook_url: null,
      created_at: '2026-11-22T12:00:00.000Z',
      // Without "version": the newest current one (docs/consumers.md#pins).
      pinned_version: 2,
      keys: [],
    });
  });

  it('takes an explicit id, and decodes the body as JSON whatever its Content-Type', async () => {
    const app = await admin();
    const res = await app.inject({
      method: 'POST',
      url: '/consumers',
      payload: '{"name":"Zoë Ltd","id":"zoe"}',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ id: 'zoe', name: 'Zoë Ltd' });
    expect((await post(app, '/consumers', { name: 'Zoë Ltd 2' })).json()).toMatchObject({ id: 'zoe-ltd-2' });
  });

  it(
    'answers a webhook secret (whsec_ + base64 of 32 bytes) once, when webhook_url is set, and never shows it ' +
      'again',
    async () => {
      const app = await admin();
      const res = await post(app, '/consumers', { name: 'Hooked', webhook_url: 'https://hooks.example/v1/versions' });
      expect(res.statusCode).toBe(201);
      // A credential: no cache may keep the answer.
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json<{ webhook_secret: string; webhook_url: string }>();
      expect(body.webhook_url).toBe('https://hooks.example/v1/versions');
      expect(body.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(body.webhook_secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
      const read = await app.inject({ url: '/consumers/hooked' });
      expect(read.json()).not.toHaveProperty('webhook_secret');
      expect(read.body).not.toContain(body.webhook_secret);
      expect((await post(app, '/consumers', { name: 'Plain' })).json()).not.toHaveProperty('webhook_secret');
    },
  );

  it('answers a taken id 409', async () => {
    const app = await admin();
    expect((await post(app, '/consumers', { name: 'Acme' })).statusCode).toBe(201);
    const res = await post(app, '/consumers', { name: 'ACME' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'consumer already exists', code: 409, details: 'id "acme" is taken' });
  });

  it.each([
    ['no name', { contact_email: 'a@b.example' }, 'name: is required'],
    ['an empty name', { name: '  ' }, 'name: must not be empty'],
    ['a name that is no string', { name: 42 }, 'name: must be a string'],
    ['a name with no letter or digit', { name: '!!!' }, 'name: gives no id (no letter or digit); send "id"'],
    ['an unknown field', { name: 'Acme', team: 'x' }, 'unknown field "team"'],
    [
      'a malformed e-mail',
      { name: 'Acme', contact_email: 'billing at acme' },
      'contact_email: must be an e-mail address',
    ],
    [
      'a webhook URL that is not http(s)',
      { name: 'Acme', webhook_url: 'ftp://hooks.example/x' },
      'webhook_url: must be an http:// or https:// URL',
    ],
    [
      'a webhook URL that is no URL',
      { name: 'Acme', webhook_url: 'hooks.example/x' },
      'webhook_url: must be an http:// or https:// URL',
    ],
    [
      'a javascript: webhook URL',
      { name: 'Acme', webhook_url: 'javascript:alert(1)' },
      'webhook_url: must be an http:// or https:// URL',
    ],
    [
      'a file: webhook URL',
      { name: 'Acme', webhook_url: 'file:///etc/passwd' },
      'webhook_url: must be an http:// or https:// URL',
    ],
    [
      'an http URL without a host',
      { name: 'Acme', webhook_url: 'http://' },
      'webhook_url: must be an http:// or https:// URL',
    ],
    [
      'an e-mail with a display name',
      { name: 'Acme', contact_email: 'Acme <billing@acme.example>' },
      'contact_email: must be an e-mail address',
    ],
    [
      'an e-mail that adds a header line',
      { name: 'Acme', contact_email: 'billing@acme.example\r\nBcc: all@example.com' },
      'contact_email: must be an e-mail address',
    ],
    [
      'an e-mail without a domain',
      { name: 'Acme', contact_email: 'billing@' },
      'contact_email: must be an e-mail address',
    ],
    [
      'an id with capitals',
      { name: 'Acme', id: 'Acme' },
      'id: must be 1-64 lower-case letters, digits and hyphens, starting and ending with a letter or digit',
    ],
    [
      'an id ending in a hyphen',
      { name: 'Acme', id: 'acme-' },
      'id: must be 1-64 lower-case letters, digits and hyphens, starting and ending with a letter or digit',
    ],
    ['a body that is no object', [1, 2], 'must be a JSON object'],
    ['a body that is not JSON', '{"name":', 'the body is not JSON'],
    ['no body', undefined, 'name: is required'],
  ])('answers %s 400 invalid consumer', async (_what, body, details) => {
    const app = await admin();
    const res = await post(app, '/consumers', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid consumer', code: 400, details });
  });
});

describe('keys of a consumer', () => {
  it('issues a key shown once (vr_<key id>_<secret>), lists it without its secret, and revokes it', async () => {
    const app = await admin();
    await post(app, '/consumers', { name: 'Acme' });
    const issued = await post(app, '/consumers/acme/keys');
    expect(issued.statusCode).toBe(201);
    expect(issued.headers['cache-control']).toBe('no-store');
    const { key_id: keyId, key } = issued.json<{ key_id: string; key: string }>();
    expect(key).toMatch(KEY);
    expect(key.slice(3, 15)).toBe(keyId);
    expect(issued.json()).toEqual({ key_id: keyId, key, consumer_id: 'acme', created_at: '2026-11-22T12:00:00.000Z' });

    const read = await app.inject({ url: '/consumers/acme' });
    expect(read.json()).toMatchObject({
      id: 'acme',
      keys: [{ key_id: keyId, created_at: '2026-11-22T12:00:00.000Z', revoked_at: null }],
    });
    expect(read.body).not.toContain(key.slice(16));

    gateway?.setNow(Date.parse('2026-11-23T08:00:00Z'));
    const revoked = await app.inject({ method: 'DELETE', url: `/consumers/acme/keys/${keyId}` });
    expect(revoked.statusCode).toBe(204);
    expect(revoked.body).toBe('');
    expect((await app.inject({ url: '/consumers/acme' })).json()).toMatchObject({
      keys: [{ key_id: keyId, revoked_at: '2026-11-23T08:00:00.000Z' }],
    });
    // Revoking again changes nothing and still answers 204.
    expect((await app.inject({ method: 'DELETE', url: `/consumers/acme/keys/${keyId}` })).statusCode).toBe(204);
  });

  it('gives each key its own id and secret', async () => {
    const app = await admin();
    await post(app, '/consumers', { name: 'Acme' });
    const keys = await Promise.all([1, 2, 3].map(() => post(app, '/consumers/acme/keys')));
    expect(new Set(keys.map((res) => res.json<{ key: string }>().key)).size).toBe(3);
    expect(new Set(keys.map((res) => res.json<{ key_id: string }>().key_id)).size).toBe(3);
  });

  it.each([
    ['GET', '/consumers/nobody', 'consumer not found'],
    ['POST', '/consumers/nobody/keys', 'consumer not found'],
    ['DELETE', '/consumers/nobody/keys/AAAAAAAAAAAA', 'consumer not found'],
    ['DELETE', '/consumers/acme/keys/AAAAAAAAAAAA', 'key not found'],
    ['DELETE', '/consumers/acme/keys/not-a-key-id', 'key not found'],
  ])('answers %s %s 404 %s', async (method, url, error) => {
    const app = await admin();
    await post(app, '/consumers', { name: 'Acme' });
    const res = await app.inject({ method: method as 'GET', url });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error, code: 404 });
  });

  it("answers 404 key not found for another consumer's key", async () => {
    const app = await admin();
    await post(app, '/consumers', { name: 'Acme' });
    await post(app, '/consumers', { name: 'Other' });
    const { key_id: keyId } = (await post(app, '/consumers/other/keys')).json<{ key_id: string }>();
    const res = await app.inject({ method: 'DELETE', url: `/consumers/acme/keys/${keyId}` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'key not found', code: 404 });
  });

  it('answers 503 storage unavailable with Retry-After while the store cannot be reached', async () => {
    const app = await admin();
    (gateway as TestGateway).consumerStore.down = true;
    const res = await post(app, '/consumers', { name: 'Acme' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toEqual({ error: 'storage unavailable', code: 503 });
  });
});

describe('GET /registered-consumers', () => {
  it('lists every registered consumer by id, never a secret; GET /consumers stays the anonymous table', async () => {
    const app = await admin();
    expect((await app.inject({ url: '/registered-consumers' })).json()).toEqual({ consumers: [] });
    await post(app, '/consumers', { name: 'Zed' });
    await post(app, '/consumers', {
      name: 'Acme',
      contact_email: 'a@acme.example',
      webhook_url: 'https://hooks.example/a',
    });
    const res = await app.inject({ url: '/registered-consumers' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      consumers: [
        {
          id: 'acme',
          name: 'Acme',
          contact_email: 'a@acme.example',
          webhook_url: 'https://hooks.example/a',
          created_at: '2026-11-22T12:00:00.000Z',
          pinned_version: 2,
        },
        {
          id: 'zed',
          name: 'Zed',
          contact_email: null,
          webhook_url: null,
          created_at: '2026-11-22T12:00:00.000Z',
          pinned_version: 2,
        },
      ],
    });
    expect((await app.inject({ url: '/consumers' })).json()).toEqual({ versions: [{ version: 1, consumers: [] }] });
  });

  it('is refused off loopback without ADMIN_TOKEN, like the rest of the registry', async () => {
    const open = await admin({ adminHost: '0.0.0.0' });
    expect((await open.inject({ url: '/registered-consumers' })).json()).toEqual({
      error: 'admin token required off loopback',
      code: 403,
    });
  });
});

describe('who may use the registry', () => {
  it('refuses it off loopback without ADMIN_TOKEN (403), and asks for the token when one is set (401)', async () => {
    const open = await admin({ adminHost: '0.0.0.0' });
    expect((await post(open, '/consumers', { name: 'Acme' })).json()).toEqual({
      error: 'admin token required off loopback',
      code: 403,
    });
    await gateway?.app.close();
    const guarded = await admin({ adminHost: '0.0.0.0', adminToken: 'a-token-of-at-least-16' });
    const refused = await post(guarded, '/consumers', { name: 'Acme' });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="admin"');
    const allowed = await guarded.inject({
      method: 'POST',
      url: '/consumers',
      payload: '{"name":"Acme"}',
      headers: { authorization: 'Bearer a-token-of-at-least-16' },
    });
    expect(allowed.statusCode).toBe(201);
    expect((await guarded.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});
