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

/** The value of an unlabelled series, e.g. `process_open_fds`. */
export function metricValue(text: string, name: string): number {
  const line = seriesOf(text).find((sample) => sample.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no ${name} on /metrics`);
  return Number(line.slice(name.length + 1).split(' ')[0]);
}
