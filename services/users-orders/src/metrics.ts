import { Gauge, Histogram, type Registry } from 'prom-client';
import type { DatabaseMetricSources } from '@version-router/platform/postgres';

/**
 * The backend's own metrics (the HTTP ones come from @version-router/platform/metrics). Names are an
 * interface: ops/prometheus/rules.yml and the Grafana dashboard query them.
 */
export interface DatabaseMetrics {
  /** Seconds per database statement, by what the store was doing. */
  queryDuration: Histogram<'operation'>;
}

/**
 * The pool gauges read the pool at scrape time, and db_up runs the reachability probe then. Registered only when the
 * users live in PostgreSQL: an in-memory backend exports no db_* series.
 */
export function createDatabaseMetrics(registry: Registry, sources: DatabaseMetricSources): DatabaseMetrics {
  new Gauge({
    name: 'db_pool_connections',
    help: 'Connections of this replica to PostgreSQL: idle, busy (checked out), and waiting (requests queued for one).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const { totalCount, idleCount, waitingCount } = sources.pool;
      this.set({ state: 'idle' }, idleCount);
      this.set({ state: 'busy' }, totalCount - idleCount);
      this.set({ state: 'waiting' }, waitingCount);
    },
  });
  new Gauge({
    name: 'db_up',
    help: '1 when PostgreSQL answered a probe at this scrape, 0 when it could not be reached in time.',
    registers: [registry],
    async collect() {
      this.set((await sources.isReachable()) ? 1 : 0);
    },
  });
  return {
    queryDuration: new Histogram({
      name: 'db_query_duration_seconds',
      help: 'Time of one PostgreSQL statement from asking the pool for a connection to its result, by operation.',
      labelNames: ['operation'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  };
}
