// The second edition's operations in the engine, each both ways: move, envelope, status, header, path, link, and
// `"on": "error"`. (Modules: module-step.test.ts.)
import { describe, expect, it } from 'vitest';
import type { VersionChange } from '../../src/translation/changes.js';
import { compileTranslations, type RouteTranslation } from '../../src/translation/compile.js';
import { readJson, writeJson } from '../../src/translation/json-text.js';
import { TranslationRefusal } from '../../src/translation/refusal.js';
import { ORDERS, routeOf } from '../support/orders-v1.js';

type Apply = (body: unknown) => unknown;
const same: Apply = (body) => body;

/** Text in, text out, as the gateway reads and writes bodies. */
const through = (apply: Apply | undefined, text: string): string =>
  writeJson((apply ?? same)((readJson(text, 64) as { value: unknown }).value));

function refusalOf(apply: Apply | undefined, text: string): string {
  try {
    through(apply, text);
  } catch (error) {
    if (error instanceof TranslationRefusal) return `${error.reason}: ${error.details}`;
    throw error;
  }
  return 'translated';
}

const forward = (route: RouteTranslation) => route.requestBody;
const backward = (route: RouteTranslation, status = 200) => route.answer(status).body;

describe('move', () => {
  const route = routeOf([{ resource: ORDERS, op: 'move', field: 'customer_id', to: 'customer.id' }]);

  it("puts the field into the successor's new parent, created forward and dropped backward when left empty", () => {
    // Each takes the place of what it leaves: the keys keep their order both ways.
    expect(through(forward(route), '{"id":"o","customer_id":"u","total":1}')).toBe(
      '{"id":"o","customer":{"id":"u"},"total":1}',
    );
    expect(through(backward(route), '{"id":"o","customer":{"id":"u"},"total":1}')).toBe(
      '{"id":"o","customer_id":"u","total":1}',
    );
  });

  it('moves into a parent the body has, and leaves a parent that keeps other fields', () => {
    expect(through(forward(route), '{"customer":{"name":"Ada"},"customer_id":"u"}')).toBe(
      '{"customer":{"name":"Ada","id":"u"}}',
    );
    expect(through(backward(route), '{"customer":{"name":"Ada","id":"u"}}')).toBe(
      '{"customer":{"name":"Ada"},"customer_id":"u"}',
    );
  });

  it('leaves a body without the field as it is, and refuses a place already taken', () => {
    const untouched = '{"id":"o","customer":{"name":"Ada"}}';
    expect(through(forward(route), untouched)).toBe(untouched);
    expect(through(backward(route), '{"id":"o"}')).toBe('{"id":"o"}');
    expect(refusalOf(forward(route), '{"customer_id":"u","customer":{"id":"x"}}')).toBe(
      'collision: $.customer: "id" is already in the body, where a moved field goes',
    );
    expect(refusalOf(forward(route), '{"customer_id":"u","customer":"text"}')).toBe(
      'collision: $: "customer" is no object, where a moved field goes into',
    );
    expect(refusalOf(backward(route), '{"customer_id":"x","customer":{"id":"u"}}')).toBe(
      'collision: $: "customer_id" is already in the body, where a moved field goes',
    );
  });

  it("moves within each item of an array, keeps the value's text, and goes out of a parent as well as in", () => {
    const lines = routeOf([
      { resource: ORDERS, op: 'move', field: 'lines[].sku', to: 'lines[].product.sku' },
      { resource: ORDERS, op: 'move', field: 'buyer.name', to: 'buyer_name' },
    ]);
    const v1 = '{"lines":[{"sku":123456789012345678,"qty":1},"x",{"qty":2}],"buyer":{"name":"Ada"}}';
    const v2 = '{"lines":[{"product":{"sku":123456789012345678},"qty":1},"x",{"qty":2}],"buyer_name":"Ada"}';
    expect(through(forward(lines), v1)).toBe(v2);
    expect(through(backward(lines), v2)).toBe(v1);
  });

  it('puts a field moved into an object that stays after its keys, and back where its place was freed', () => {
    expect(through(forward(route), '{"customer_id":"u","customer":{"name":"Ada"},"id":"o"}')).toBe(
      '{"customer":{"name":"Ada","id":"u"},"id":"o"}',
    );
  });

  it('swaps two fields in one step, and goes along with a rename of a field inside the moved one', () => {
    const swap = routeOf([
      { resource: ORDERS, op: 'move', field: 'a', to: 'x.b' },
      { resource: ORDERS, op: 'move', field: 'x.b', to: 'a' },
    ]);
    expect(through(forward(swap), '{"a":1,"x":{"b":2}}')).toBe('{"a":2,"x":{"b":1}}');
    const inside = routeOf([
      { resource: ORDERS, op: 'move', field: 'customer', to: 'buyer.customer' },
      { resource: ORDERS, op: 'rename', field: 'customer.name', to: 'customer.full_name' },
    ]);
    expect(through(forward(inside), '{"customer":{"name":"Ada"}}')).toBe('{"buyer":{"customer":{"full_name":"Ada"}}}');
    expect(through(backward(inside), '{"buyer":{"customer":{"full_name":"Ada"}}}')).toBe('{"customer":{"name":"Ada"}}');
  });
});

describe('envelope', () => {
  const route = routeOf([
    { resource: ORDERS, op: 'envelope', field: 'data' },
    { resource: ORDERS, op: 'rename', field: 'user_id', to: 'customer_id' },
  ]);

  it("holds this version's whole body under the key, field changes inside it; other keys dropped backward", () => {
    expect(through(forward(route), '{"id":"o","user_id":"u"}')).toBe('{"data":{"id":"o","customer_id":"u"}}');
    expect(through(backward(route), '{"data":{"id":"o","customer_id":"u"},"meta":{"request":"r"}}')).toBe(
      '{"id":"o","user_id":"u"}',
    );
  });

  it('wraps a bare array, a scalar and null; an answer without the key is left as it is', () => {
    expect(through(forward(route), '[1,{"user_id":"u"}]')).toBe('{"data":[1,{"user_id":"u"}]}');
    expect(through(backward(route), '{"data":[1,2],"total":2}')).toBe('[1,2]');
    expect(through(backward(route), '{"data":null}')).toBe('null');
    expect(through(forward(route), '3')).toBe('{"data":3}');
    expect(through(backward(route), '{"items":[]}')).toBe('{"items":[]}');
  });

  it('wraps under a dotted path', () => {
    const nested = routeOf([{ resource: ORDERS, op: 'envelope', field: 'result.order' }]);
    expect(through(forward(nested), '{"id":"o"}')).toBe('{"result":{"order":{"id":"o"}}}');
    expect(through(backward(nested), '{"result":{"order":{"id":"o"},"ok":true}}')).toBe('{"id":"o"}');
    expect(through(backward(nested), '{"result":"none"}')).toBe('{"result":"none"}');
  });
});

describe('status', () => {
  const route = routeOf([
    { resource: ORDERS, op: 'status', from: 403, to: 401 },
    { resource: ORDERS, op: 'status', from: 201, to: 200 },
  ]);

  it("answers the successor's status with this version's, and the envelope's code with it", () => {
    const plan = route.answer(403);
    expect(plan.status).toBe(401);
    expect(through(plan.body, '{"error":"forbidden","code":403,"details":"d"}')).toBe(
      '{"error":"forbidden","code":401,"details":"d"}',
    );
    expect(through(plan.body, '{"error":"x","code":"403"}')).toBe('{"error":"x","code":"403"}');
    expect(route.answer(201).status).toBe(200);
    expect(route.answer(404)).toEqual({ status: 404, body: undefined });
    expect(route.answer(200)).toEqual({ status: 200, body: undefined });
  });

  it('goes through a chain newest first: v3 → v2 → v1', () => {
    const compiled = compileTranslations({
      versions: [
        { version: 1, successor: 2, changes: [{ resource: ORDERS, op: 'status', from: 401, to: 400 }] },
        { version: 2, successor: 3, changes: [{ resource: ORDERS, op: 'status', from: 403, to: 401 }] },
        { version: 3 },
      ],
      resources: [{ path: ORDERS, versions: undefined }],
    });
    const v1 = compiled.versions.get(1)?.routes.get(ORDERS) as RouteTranslation;
    expect(v1.answer(403).status).toBe(400);
    expect(through(v1.answer(403).body, '{"code":403}')).toBe('{"code":400}');
    expect(v1.answer(401).status).toBe(400);
    expect((compiled.versions.get(2)?.routes.get(ORDERS) as RouteTranslation).answer(403).status).toBe(401);
  });
});

describe('header', () => {
  const route = routeOf([{ resource: ORDERS, op: 'header', name: 'Total-Count', to: 'X-Total-Count' }]);

  it("names the successor's header as this version does in answers, and this version's in requests", () => {
    const answer: Record<string, string | undefined> = { 'total-count': '7', 'content-type': 'application/json' };
    route.answerHeaders?.(answer);
    expect(Object.entries(answer).filter(([, value]) => value !== undefined)).toEqual([
      ['content-type', 'application/json'],
      ['x-total-count', '7'],
    ]);
    const request: Record<string, string | undefined> = { 'x-total-count': '3' };
    route.requestHeaders?.(request);
    expect(request).toEqual({ 'x-total-count': undefined, 'total-count': '3' });
  });

  it('refuses two headers that would have one name', () => {
    expect(() => route.answerHeaders?.({ 'total-count': '7', 'x-total-count': '8' })).toThrow(
      'the header total-count becomes x-total-count, which is there already',
    );
  });
});

describe('path', () => {
  const compiled = compileTranslations({
    versions: [
      { version: 1, successor: 2, changes: [{ resource: '/clients/:id', op: 'path', to: '/users/:id' }] },
      { version: 2 },
    ],
    resources: [
      { path: '/clients/:id', versions: [1] },
      { path: '/users/:id', versions: [2] },
    ],
  });
  const route = compiled.versions.get(1)?.routes.get('/clients/:id') as RouteTranslation;

  it('asks the successor at its path, and names this version again in Location', () => {
    expect(route.servedTemplate).toBe('/users/:id');
    expect(route.target('/clients/u-1')).toBe('/users/u-1');
    expect(route.location('/v2/users/u-1')).toBe('/v1/clients/u-1');
    expect(route.location('https://api.example.com/api/v2/users/u-1?x=1#f')).toBe(
      'https://api.example.com/api/v1/clients/u-1?x=1#f',
    );
    // Another resource's path only changes its version; a path of another version or no path is left.
    expect(route.location('/v2/orders/o-1')).toBe('/v1/orders/o-1');
    expect(route.location('/v3/users/u-1')).toBe('/v3/users/u-1');
    expect(route.location('/v22/users/u')).toBe('/v22/users/u');
    expect(route.location('mailto:x')).toBe('mailto:x');
  });

  it('lists only the resources a version has', () => {
    expect([...(compiled.versions.get(1)?.routes.keys() ?? [])]).toEqual(['/clients/:id']);
  });
});

describe('link', () => {
  const compiled = compileTranslations({
    versions: [
      {
        version: 1,
        successor: 2,
        changes: [
          { resource: ORDERS, op: 'link', field: 'next' },
          { resource: ORDERS, op: 'link', field: 'links[].href' },
          { resource: ORDERS, op: 'link', field: 'Link' },
          { resource: ORDERS, op: 'path', to: '/purchases/:id' },
        ],
      },
      { version: 2 },
    ],
    resources: [
      { path: ORDERS, versions: [1] },
      { path: '/purchases/:id', versions: [2] },
    ],
  });
  const route = compiled.versions.get(1)?.routes.get(ORDERS) as RouteTranslation;

  it("rewrites a field's path of this API to the version the client used, both ways", () => {
    const v2 = '{"next":"/v2/purchases/o-2?cursor=abc","links":[{"href":"https://x.test/api/v2/orders"},{"rel":"a"}]}';
    const v1 = '{"next":"/v1/orders/o-2?cursor=abc","links":[{"href":"https://x.test/api/v1/orders"},{"rel":"a"}]}';
    expect(through(backward(route), v2)).toBe(v1);
    expect(through(forward(route), v1)).toBe(v2);
  });

  it('leaves anything else as it is: another version, another API, a number, null', () => {
    const others = '{"next":"/v3/purchases/o","links":[{"href":"https://other.test/docs"},{"href":7},{"href":null}]}';
    expect(through(backward(route), others)).toBe(
      '{"next":"/v3/purchases/o","links":[{"href":"https://other.test/docs"},{"href":7},{"href":null}]}',
    );
  });

  it("rewrites the Link header's targets, keeping their parameters", () => {
    expect(
      route.linkHeader?.('</v2/purchases/o-2?page=2>; rel="next", <https://x.test/v2/purchases/o-1>; rel="prev"'),
    ).toBe('</v1/orders/o-2?page=2>; rel="next", <https://x.test/v1/orders/o-1>; rel="prev"');
    expect(routeOf([]).linkHeader).toBeUndefined();
  });
});

describe('"on": "error"', () => {
  const changes: VersionChange[] = [
    { resource: ORDERS, op: 'rename', field: 'details', to: 'message', on: 'error' },
    { resource: ORDERS, op: 'rename', field: 'user_id', to: 'customer_id' },
  ];
  const route = routeOf(changes);

  it('changes error envelopes, never 2xx bodies or requests; success changes never touch errors', () => {
    expect(through(backward(route, 404), '{"error":"order not found","code":404,"message":"m"}')).toBe(
      '{"error":"order not found","code":404,"details":"m"}',
    );
    expect(through(backward(route, 503), '{"message":"m","customer_id":"u"}')).toBe(
      '{"details":"m","customer_id":"u"}',
    );
    expect(through(backward(route, 200), '{"message":"m","customer_id":"u"}')).toBe('{"message":"m","user_id":"u"}');
    expect(through(forward(route), '{"details":"d","user_id":"u"}')).toBe('{"details":"d","customer_id":"u"}');
    // A 3xx has no body of either kind.
    expect(route.answer(302).body).toBeUndefined();
  });
});
