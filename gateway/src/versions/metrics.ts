import { Counter, Gauge, type Registry } from 'prom-client';
import type { Resolution, VersionPolicy } from './policy.js';

/** Metric names are an interface (DESIGN "Metrics"): ops/ rules and dashboards query them. */
export const versionMetricNames = {
  requests: 'api_version_requests_total',
  sunset: 'api_version_sunset_timestamp_seconds',
} as const;

export interface VersionMetrics {
  /** Counts one answered order request under its resolution's labels. */
  count(resolution: Resolution, statusCode: number): void;
}

export function createVersionMetrics(registry: Registry, policy: VersionPolicy): VersionMetrics {
  const requests = new Counter({
    name: versionMetricNames.requests,
    help: 'Order requests answered, by API version (or "invalid"), deprecation, how the version was selected, and status code.',
    labelNames: ['version', 'deprecated', 'selected_by', 'status_code'] as const,
    registers: [registry],
  });
  const sunset = new Gauge({
    name: versionMetricNames.sunset,
    help: 'Sunset instant of each API version that has one, in Unix seconds.',
    labelNames: ['version'] as const,
    registers: [registry],
  });
  for (const { version, epochSeconds } of policy.sunsets) sunset.set({ version: String(version) }, epochSeconds);

  // Resolutions are shared, precomputed objects, so label children can be found without building label sets.
  const children = new Map<Resolution, Map<number, Counter.Internal>>();
  return {
    count(resolution, statusCode) {
      let byStatus = children.get(resolution);
      if (byStatus === undefined) {
        byStatus = new Map();
        children.set(resolution, byStatus);
      }
      let child = byStatus.get(statusCode);
      if (child === undefined) {
        child = requests.labels({ ...resolution.labels, status_code: String(statusCode) });
        byStatus.set(statusCode, child);
      }
      child.inc();
    },
  };
}
