/**
 * What the fleet's HAProxy instances say about the replicas behind them: the statistics CSV of
 * their monitor port (read from inside the container, so the internal one needs no published
 * port) and their error log (ops/haproxy logs abnormal requests only).
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

/** The servers of one HAProxy backend section (`gateways`, `backends`), as its statistics list them now. */
export async function serverStats(containerId: string, section: string): Promise<ServerStats[]> {
  const request = "exec 3<>/dev/tcp/127.0.0.1/8404 && printf 'GET /stats;csv HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3";
  const { stdout } = await docker(['exec', containerId, 'bash', '-c', request], { timeoutMs: 15_000 });
  const csv = stdout.slice(stdout.indexOf('# '));
  const [header = '', ...rows] = csv.split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const column = (name: string): number => {
    const index = columns.indexOf(name);
    if (index < 0) throw new Error(`HAProxy statistics have no column ${name}`);
    return index;
  };
  const [proxy, server, status, address, current] = ['pxname', 'svname', 'status', 'addr', 'scur'].map(column) as [number, number, number, number, number];
  return rows
    .map((row) => row.split(','))
    .filter((fields) => fields[proxy] === section && fields[server] !== 'BACKEND' && fields[server] !== 'FRONTEND')
    .map((fields) => ({ name: fields[server] ?? '', status: fields[status] ?? '', address: fields[address] ?? '', current: Number(fields[current]) }));
}

/** Error-log lines (HAProxy's httplog format) of requests HAProxy sent to one server since `sinceIso`. */
export async function errorLog(containerId: string, section: string, server: string, sinceIso: string): Promise<string[]> {
  const { stdout, stderr } = await docker(['logs', '--since', sinceIso, containerId]);
  return `${stdout}\n${stderr}`.split('\n').filter((line) => line.includes(` ${section}/${server} `));
}
