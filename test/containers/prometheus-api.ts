/** Prometheus's HTTP query API, for the container suites that run a Prometheus. */

export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query; rejects with Prometheus's error text when the query fails. */
export async function promQuery(prometheusUrl: string, expr: string): Promise<PromSample[]> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await response.json()) as { status: string; data?: { result: PromSample[] }; error?: string };
  if (response.status !== 200 || body.status !== 'success' || body.data === undefined) {
    throw new Error(`Prometheus query ${expr}: ${response.status} ${body.error ?? ''}`);
  }
  return body.data.result;
}
