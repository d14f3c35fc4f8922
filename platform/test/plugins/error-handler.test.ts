import { describe, expect, it } from 'vitest';
import { buildFoundationApp } from '../helpers.js';

describe('error handler', () => {
  it('turns an HttpError into the ErrorResponse with details', async () => {
    const app = await buildFoundationApp();
    const res = await app.inject({ method: 'GET', url: '/teapot' });
    expect(res.statusCode).toBe(418);
    expect(res.json()).toEqual({ error: 'teapot', code: 418, details: 'short and stout' });
  });

  it('hides the text of an unhandled failure behind 500 internal error', async () => {
    const app = await buildFoundationApp();
    const res = await app.inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal error', code: 500 });
    expect(res.body).not.toContain('secret');
  });
});
