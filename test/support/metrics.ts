/** The Prometheus text of a service's admin /metrics. */
export async function scrape(adminUrl: string): Promise<string> {
  const res = await fetch(`${adminUrl}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return res.text();
}

/** Every sample line (one per series), without comments. */
export function seriesOf(text: string): string[] {
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * The value of one series, named as /metrics prints it: `process_open_fds`, or with its labels,
 * `nodejs_heap_space_size_total_bytes{space="new"}`.
 */
export function metricValue(text: string, series: string): number {
  const line = seriesOf(text).find((sample) => sample.startsWith(`${series} `));
  if (line === undefined) throw new Error(`no ${series} on /metrics`);
  return Number(line.slice(series.length + 1).split(' ')[0]);
}
