// The deprecation headers of an answer: RFC 9745 Deprecation (true or @epoch), RFC 8594 Sunset, and the Link
// relations the policy adds.
import { describe, expect, it } from 'vitest';
import {
  V1_LIFECYCLE_LINKS,
  V1_SUNSET,
  buildTestGateway,
  lifecyclePolicyFile,
  stubbedGatewayPerTest,
} from '../support/helpers.js';

const fixture = stubbedGatewayPerTest();
const get = (url: string, headers: Record<string, string> = {}) =>
  fixture.gateway.app.inject({ method: 'GET', url, headers });

describe('RFC 9745 and RFC 8594 headers', () => {
  it('sends Deprecation: @<epoch> and the deprecation and sunset links with "date"', async () => {
    await fixture.gateway.app.close();
    fixture.gateway = await buildTestGateway(fixture.stub.url, { policy: lifecyclePolicyFile });
    const res = await get('/v1/orders/ord-1001');
    expect(res.headers).toMatchObject({
      deprecation: '@1780272000',
      sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
      link: `</v2/orders/ord-1001>; rel="successor-version"${V1_LIFECYCLE_LINKS}`,
    });
    fixture.gateway.setNow(V1_SUNSET);
    expect((await get('/v1/orders/ord-1001')).headers.link).toBe(
      `</v2/orders/ord-1001>; rel="successor-version"${V1_LIFECYCLE_LINKS}`,
    );
  });

  it('keeps Deprecation: true when the policy does not choose the date form', async () => {
    expect((await get('/v1/orders/ord-1001')).headers.deprecation).toBe('true');
  });
});
