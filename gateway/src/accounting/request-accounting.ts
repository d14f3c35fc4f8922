import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { routeLabelOf } from '@version-router/platform/http-foundation';
import type { Clock } from '@version-router/platform/clock';
import { operationOf, type Ledger } from '../consumers/ledger.js';
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
  /** Authenticated consumers' use of each version, fleet-wide. */
  ledger: Ledger;
  clock: Clock;
}

/**
 * What is counted of each answered request on a versioned resource, once its response is complete (an
 * aborted one as 499): `api_version_requests_total`, the status page's traffic ring and anonymous
 * consumers, the consumer ledger for a request with a valid key (a closed-to-new refusal as a refusal), and
 * for a deprecated version the fields
 * of the request's log line that name the client. Registered at the root, so every route
 * family's requests pass the same hook.
 */
async function requestAccountingPlugin(
  app: FastifyInstance,
  { metrics, usage, ledger, clock }: RequestAccountingOptions,
): Promise<void> {
  app.decorateRequest('apiVersion', null);
  app.addHook('onResponse', (request, reply, done) => {
    const answer = request.apiVersion;
    if (answer !== null) {
      metrics.countVersionedRequest(answer, reply.statusCode);
      const consumer = request.consumer;
      usage.record(answer, request.raw.headers, consumer !== null);
      if (consumer !== null && answer.version !== null) {
        const operation = operationOf(request.method, routeLabelOf(request), answer.selectedBy);
        // A refused newcomer made no use of the version: counted apart, so it stays new and no user of it.
        if (request.consumerRefused) ledger.refuse(consumer, answer.version, operation, clock());
        else ledger.record(consumer, answer.version, operation, clock());
      }
      if (answer.labels.deprecated === 'true') {
        // Names the consumers who still have to migrate: whom to tell before the sunset. On the request's
        // one `request completed` line, not a line of its own (docs/observability.md#logging).
        request.completionLogFields = {
          deprecated: true,
          version: answer.version,
          // "default" marks clients that send no API-Version and will move when default_version does.
          selectedBy: answer.selectedBy,
          userAgent: request.raw.headers['user-agent'],
          clientId: request.raw.headers['x-client-id'],
          consumer: consumer ?? undefined,
          refused: request.consumerRefused ? 'closed_to_new' : undefined,
        };
      }
    }
    done();
  });
}

export const requestAccounting = fp(requestAccountingPlugin, { name: 'request-accounting' });
