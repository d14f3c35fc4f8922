import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { routeLabelOf } from '@version-router/platform/http-foundation';
import type { VersionAnswer } from '../versions/policy.js';
import type { GatewayMetrics } from './metrics.js';
import type { VersionUsage } from './usage.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The policy's answer for a request on a versioned resource (set by the catch-all route), null elsewhere. */
    apiVersion: VersionAnswer | null;
  }
}

export interface RequestAccountingOptions {
  metrics: GatewayMetrics;
  usage: VersionUsage;
}

/**
 * What is counted of each answered request on a versioned resource, once its response is complete (an
 * aborted one as 499): `api_version_requests_total`, the status page's traffic ring and anonymous
 * consumers, and for a deprecated version the `deprecated api version used` log line that names the
 * client. Registered at the root, so every route family's requests pass the same hook.
 */
async function requestAccountingPlugin(app: FastifyInstance, { metrics, usage }: RequestAccountingOptions): Promise<void> {
  app.decorateRequest('apiVersion', null);
  app.addHook('onResponse', (request, reply, done) => {
    const answer = request.apiVersion;
    if (answer !== null) {
      metrics.countVersionedRequest(answer, reply.statusCode);
      usage.record(answer, request.raw.headers);
      if (answer.labels.deprecated === 'true') {
        // Names the consumers who still have to migrate: whom to tell before the sunset.
        request.log.info(
          {
            version: answer.version,
            // "default" marks clients that send no API-Version and will move when default_version does.
            selectedBy: answer.selectedBy,
            route: routeLabelOf(request),
            status: reply.statusCode,
            userAgent: request.raw.headers['user-agent'],
            clientId: request.raw.headers['x-client-id'],
          },
          'deprecated api version used',
        );
      }
    }
    done();
  });
}

export const requestAccounting = fp(requestAccountingPlugin, { name: 'request-accounting' });
