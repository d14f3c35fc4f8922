/**
 * What the fleet's HAProxy instances say about the replicas behind them: the statistics CSV of
 * their monitor port, read from inside the container, so the internal one needs no published port.
 */
import { docker } from '../docker.js';

export interface ServerStats {
  /** The server-template slot, e.g. gateway2. */
  name: string;
  /** UP, DOWN, MAINT (resolution), … with a transition suffix such as "1/2" while it changes. */
  status: string;
  /** ip:port the slot resolved to; empty while it holds no replica. */
  address: string;
  /** Requests in progress on it now. */
  current: number;
}

/** A backend section's totals: requests it had to send again because a connection to a replica failed. */
export interface SectionTotals {
  connectionErrors: number;
  retries: number;
  redispatches: number;
}

/** The statistics CSV as rows of named fields. */
async function statistics(containerId: string): Promise<Record<string, string>[]> {
  const request = "exec 3<>/dev/tcp/127.0.0.1/8404 && printf 'GET /stats;csv HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3";
  const { stdout } = await docker(['exec', containerId, 'bash', '-c', request], { timeoutMs: 15_000 });
  const [header = '', ...rows] = stdout.slice(stdout.indexOf('# ')).split('\n');
  const columns = header.replace(/^# /, '').split(',');
  return rows
    .filter((row) => row !== '')
    .map((row) => Object.fromEntries(row.split(',').map((field, i): [string, string] => [columns[i] ?? '', field])));
}

/** The servers of one HAProxy backend section (`gateways`, `backends`), as its statistics list them now. */
export async function serverStats(containerId: string, section: string): Promise<ServerStats[]> {
  return (await statistics(containerId))
    .filter((row) => row.pxname === section && row.svname !== 'BACKEND' && row.svname !== 'FRONTEND')
    .map((row) => ({
      name: row.svname ?? '',
      status: row.status ?? '',
      address: row.addr ?? '',
      current: Number(row.scur),
    }));
}

export async function sectionTotals(containerId: string, section: string): Promise<SectionTotals> {
  const row = (await statistics(containerId)).find(
    (candidate) => candidate.pxname === section && candidate.svname === 'BACKEND',
  );
  if (row === undefined) throw new Error(`HAProxy has no backend section ${section}`);
  return { connectionErrors: Number(row.econ), retries: Number(row.wretr), redispatches: Number(row.wredis) };
}
