import { describe, expect, it } from 'vitest';
import { requestIdFor } from '../../src/plugins/request-id.js';
import { buildFoundationApp } from '../helpers.js';

describe('request id', () => {
  it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
    const app = await buildFoundationApp();
    const kept = await app.inject({ method: 'GET', url: '/things/1', headers: { 'x-request-id': 'abc-123' } });
    expect(kept.headers['x-request-id']).toBe('abc-123');
    const replaced = await app.inject({
      method: 'GET',
      url: '/things/1',
      headers: { 'x-request-id': 'x'.repeat(129) },
    });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('accepts request ids of 1..128 visible ASCII characters only', () => {
    const idFor = (value: string) => requestIdFor({ headers: { 'x-request-id': value } } as never);
    expect(idFor('a'.repeat(128))).toBe('a'.repeat(128));
    expect(idFor('has space')).not.toBe('has space');
    expect(idFor('')).not.toBe('');
  });

  it('echoes the id on answers given before routing and by the guards too', async () => {
    const app = await buildFoundationApp();
    const malformed = await app.inject({
      method: 'GET',
      url: '/things/%E0%A4%A',
      headers: { 'x-request-id': 'bad-url-1' },
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toEqual({ error: 'bad request', code: 400, details: 'malformed URL' });
    expect(malformed.headers['x-request-id']).toBe('bad-url-1');
    const refused = await app.inject({
      method: 'GET',
      url: '/things/1',
      headers: {
        'x-request-id': 'refused-1',
        ...Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`x-f${i}`, '1'])),
      },
    });
    expect(refused.statusCode).toBe(431);
    expect(refused.headers['x-request-id']).toBe('refused-1');
  });
});
