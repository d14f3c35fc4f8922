/**
 * The scrape jobs of our two processes, as ops/prometheus/prometheus.yml names them, the Kubernetes ServiceMonitors
 * relabel them and the rules and the dashboard select them: names of this application's own, which another
 * application's `gateway` or `backend` job in a shared Prometheus never equals.
 */
export const scrapeJobs = { gateway: 'version-router-gateway', backend: 'version-router-backend' } as const;
