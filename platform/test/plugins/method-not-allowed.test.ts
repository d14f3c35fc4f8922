import { describe, expect, it } from 'vitest';
import { buildFoundationApp } from '../helpers.js';

describe('404 and 405', () => {
  it('answers an unmatched path with a JSON 404', async () => {
    const app = await buildFoundationApp();
    const res = await app.inject({ method: 'GET', url: '/nowhere' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: 'not found', code: 404 });
  });

  it('answers a known path with another method 405 and an Allow header from the route table', async () => {
    const app = await buildFoundationApp();
    const res = await app.inject({ method: 'PATCH', url: '/things/7?x=1' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, PUT');
    expect(res.json()).toEqual({ error: 'method not allowed', code: 405 });
  });
});
