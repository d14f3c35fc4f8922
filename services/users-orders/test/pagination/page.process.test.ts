import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/pagination/cursor.js';
import { MemoryUserStore, type User, type UserStore } from '../../src/users/store.js';
import { JSON_TYPE, testApp } from '../helpers.js';
import { useStoreKinds } from '../stores.js';

const storeKinds = useStoreKinds();

interface Page {
  items: User[];
  next_cursor?: string;
  has_more: boolean;
}

async function fill(store: UserStore, count: number): Promise<UserStore> {
  for (let i = 1; i <= count; i++)
    await store.create({ name: `n${i}`, email: `e${i}@example.com` }, '2026-11-22T10:00:00.000Z');
  return store;
}

const ids = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `user-${from + i}`);

describe.each(storeKinds)('GET /api/users/page on the $name store', ({ newStore }) => {
  const storeWith = async (count: number): Promise<UserStore> => fill(await newStore(), count);

  it('answers an empty first page of an empty store without next_cursor', async () => {
    const app = await testApp({ store: await newStore() });
    const res = await app.inject({ method: 'GET', url: '/api/users/page' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(JSON_TYPE);
    expect(res.json()).toStrictEqual({ items: [], has_more: false });
  });

  it('pages 20 at a time by default, in numeric id order (user-2 before user-10)', async () => {
    const app = await testApp({ store: await storeWith(25) });
    const first = (await app.inject({ method: 'GET', url: '/api/users/page' })).json<Page>();
    expect(first.items.map((user) => user.id)).toEqual(ids(1, 20));
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toBe(Buffer.from('user-20').toString('base64url'));
    const second = (
      await app.inject({ method: 'GET', url: `/api/users/page?cursor=${first.next_cursor}` })
    ).json<Page>();
    expect(second.items.map((user) => user.id)).toEqual(ids(21, 25));
    expect(second).not.toHaveProperty('next_cursor');
    expect(second.has_more).toBe(false);
  });

  it('walks every page exactly once, skipping deleted users and including users created behind the walk', async () => {
    const store = await storeWith(95);
    for (const id of ['user-1', 'user-10', 'user-11', 'user-50', 'user-95']) await store.delete(id);
    const app = await testApp({ store });
    const seen: string[] = [];
    let cursor = '';
    let pages = 0;
    for (;;) {
      const res = await app.inject({ method: 'GET', url: `/api/users/page?limit=7&cursor=${cursor}` });
      expect(res.statusCode).toBe(200);
      const page = res.json<Page>();
      expect(page.items.length).toBeLessThanOrEqual(7);
      seen.push(...page.items.map((user) => user.id));
      pages += 1;
      if (pages === 3) await store.create({ name: 'late', email: 'late@example.com' }, '2026-11-22T10:00:00.000Z');
      if (!page.has_more) {
        expect(page).not.toHaveProperty('next_cursor');
        break;
      }
      expect(page.next_cursor).toEqual(expect.any(String));
      cursor = page.next_cursor ?? '';
    }
    const expected = [...ids(2, 94).filter((id) => !['user-10', 'user-11', 'user-50'].includes(id)), 'user-96'];
    expect(seen).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 7));
  });

  it('answers has_more false and no cursor when the last page is exactly full', async () => {
    const app = await testApp({ store: await storeWith(10) });
    const page = (await app.inject({ method: 'GET', url: '/api/users/page?limit=10' })).json<Page>();
    expect(page.items).toHaveLength(10);
    expect(page).toStrictEqual({ items: page.items, has_more: false });
  });

  it('continues after a cursor whose user was deleted since it was issued', async () => {
    const store = await storeWith(6);
    const app = await testApp({ store });
    const first = (await app.inject({ method: 'GET', url: '/api/users/page?limit=3' })).json<Page>();
    await store.delete('user-3');
    const next = (
      await app.inject({ method: 'GET', url: `/api/users/page?limit=3&cursor=${first.next_cursor}` })
    ).json<Page>();
    expect(next.items.map((user) => user.id)).toEqual(['user-4', 'user-5', 'user-6']);
  });

  it.each([
    ['1', 1],
    ['100', 100],
    ['007', 7],
    ['0', 20],
    ['101', 20],
    ['-1', 20],
    ['+5', 20],
    ['1.5', 20],
    ['5.0', 20],
    ['1e1', 20],
    ['abc', 20],
    ['', 20],
    ['99999999999999999999999', 20],
  ])('treats limit=%s as %i', async (limit, expected) => {
    const app = await testApp({ store: await storeWith(120) });
    const page = (await app.inject({ method: 'GET', url: `/api/users/page?limit=${limit}` })).json<Page>();
    expect(page.items).toHaveLength(expected);
    expect(page.has_more).toBe(true);
  });

  it('treats a repeated limit as invalid, so silently 20', async () => {
    const app = await testApp({ store: await storeWith(120) });
    const page = (await app.inject({ method: 'GET', url: '/api/users/page?limit=5&limit=6' })).json<Page>();
    expect(page.items).toHaveLength(20);
  });

  it.each([
    ['not base64url', 'user-1!'],
    ['standard base64 padding', `${Buffer.from('user-10').toString('base64url')}=`],
    ['standard base64 alphabet', Buffer.from('user-1>?').toString('base64')],
    ['non-canonical trailing bits', Buffer.from('user-10').toString('base64url').replace(/A$/, 'B')],
    ['a raw id', 'user-1'],
    ['an encoded non-id', Buffer.from('admin').toString('base64url')],
    ['an encoded user-0', Buffer.from('user-0').toString('base64url')],
    ['an encoded leading zero', Buffer.from('user-01').toString('base64url')],
    ['an encoded id with a trailing space', Buffer.from('user-1 ').toString('base64url')],
    ['an encoded id past the safe integers', Buffer.from('user-99999999999999999999').toString('base64url')],
    ['an encoded JSON position', Buffer.from('{"after":3}').toString('base64url')],
  ])('rejects a cursor that is %s with 400 invalid cursor', async (_what, cursor) => {
    const app = await testApp({ store: await storeWith(3) });
    const res = await app.inject({ method: 'GET', url: `/api/users/page?cursor=${encodeURIComponent(cursor)}` });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(JSON_TYPE);
    expect(res.json()).toEqual({ error: 'invalid cursor', code: 400 });
  });

  it('rejects a repeated cursor parameter with 400 invalid cursor', async () => {
    const app = await testApp({ store: await storeWith(3) });
    const cursor = encodeCursor('user-1');
    const res = await app.inject({ method: 'GET', url: `/api/users/page?cursor=${cursor}&cursor=${cursor}` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid cursor', code: 400 });
  });

  it('is not shadowed by /api/users/:id', async () => {
    const app = await testApp({ store: await newStore() });
    const res = await app.inject({ method: 'GET', url: '/api/users/page' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toHaveProperty('has_more', false);
  });
});

describe('GET /api/users/page store failures', () => {
  it('answers a storage failure 500 listing users with the store error text as details', async () => {
    const store = new (class extends MemoryUserStore {
      override listAfter(): User[] {
        throw new Error('index shard 3 offline');
      }
    })();
    const app = await testApp({ store });
    const res = await app.inject({ method: 'GET', url: '/api/users/page?limit=5' });
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toMatch(JSON_TYPE);
    expect(res.json()).toEqual({ error: 'listing users', code: 500, details: 'index shard 3 offline' });
  });
});
