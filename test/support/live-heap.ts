import type { ServiceProcess } from '../../platform/test/support/service-process.js';
import { metricValue } from './metrics.js';

/**
 * A started process's memory as a leak test reads it: the live heap after a full collection, and RSS less the
 * young generation's growth. V8 sizes its young generation to the allocation rate, up to a limit that differs
 * between Node majors (the gateway's: 32 MiB on Node 20 whatever the load; on Node 24, 64 MiB under the hostile
 * attack and 128 MiB under the soak). That space holds no data kept between requests, so RSS alone cannot tell
 * a leak from V8's sizing (docs/testing.md#hostile-clients).
 */

/** The environment that loads test/support/heap-after-gc.mjs into a process, so liveHeap can ask it. */
export function liveHeapProbe(): { NODE_OPTIONS: string } {
  return { NODE_OPTIONS: `--expose-gc --import ${new URL('./heap-after-gc.mjs', import.meta.url).href}` };
}

/** The live heap in bytes of a process started with liveHeapProbe(), after a full collection. */
export async function liveHeap(service: ServiceProcess): Promise<number> {
  const logged = service.logs.length;
  service.child.kill('SIGWINCH');
  for (let waited = 0; waited < 5_000; waited += 20) {
    const entry = service.logs.slice(logged).find((line) => line.msg === 'heap after full gc');
    if (entry !== undefined) return Number(entry.heapUsed);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the process logged no heap after a full collection within 5 s');
}

/** The size V8 gave the young generation, from a /metrics text (prom-client's default metrics). */
export const youngGeneration = (metrics: string): number =>
  metricValue(metrics, 'nodejs_heap_space_size_total_bytes{space="new"}');

/** RSS growth from one /metrics text to a later one, as a ratio, less what the young generation grew. */
export function rssGrowthBeyondYoungGeneration(before: string, after: string): number {
  const rss = (metrics: string) => metricValue(metrics, 'process_resident_memory_bytes');
  return (rss(after) - (youngGeneration(after) - youngGeneration(before))) / rss(before) - 1;
}
