// Page latency of GET /api/users/page at 1,000 and 1,000,000 users (a page must cost O(log n + limit), not a scan).
// Runs the built JavaScript (npm run build first; `npm run bench:pagination` does both). Each page goes
// through app.inject: routing, hooks, cursor decoding, the B+ tree range read and JSON serialisation, no
// sockets. The "store" column times the store's range read alone (MemoryUserStore.listAfter).
// `npm run bench:pagination -- --postgres`: the users in an embedded PostgreSQL instead (bench/postgres.mjs),
// 1,000,000 of them; the first page against the 50,000th (the last at limit 20).
import { buildApp } from '../services/users-orders/dist/src/app.js';
import { encodeCursor } from '../services/users-orders/dist/src/pagination/cursor.js';
import { MemoryUserStore } from '../services/users-orders/dist/src/users/store.js';
import { createLogger } from '@version-router/platform/logger';
import { createRegistry } from '@version-router/platform/metrics';
import { openPostgresUsers } from '../services/users-orders/dist/src/users/postgres/open.js';
import { fillUsers, startBenchPostgres } from './postgres.mjs';

const SIZES = [1_000, 1_000_000];
const LIMITS = [20, 100];
const PAGES = 10_000;
const WARMUP = 2_000;

function fill(count) {
  const store = new MemoryUserStore();
  const now = '2026-11-22T10:00:00.000Z';
  // Fields come from JSON.parse as in the service; template strings would be cons strings that V8
  // flattens (allocates) on first serialisation, which skews the larger store's numbers.
  for (let i = 1; i <= count; i++) store.create(JSON.parse(`{"name":"User ${i}","email":"user${i}@example.com"}`), now);
  return store;
}

/** Cursors spread over the whole id range (a fixed LCG, so runs are comparable). */
function cursors(count, users) {
  let seed = 12_345;
  return Array.from({ length: count }, () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return encodeCursor(`user-${1 + (seed % users)}`);
  });
}

function stats(samplesNs) {
  const sorted = [...samplesNs].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1_000;
  return { median: at(0.5), p99: at(0.99) };
}

async function measure(app, store, users, limit) {
  const positions = cursors(WARMUP + PAGES, users);
  const http = [];
  const range = [];
  for (const [index, cursor] of positions.entries()) {
    const started = process.hrtime.bigint();
    const res = await app.inject({ method: 'GET', url: `/api/users/page?limit=${limit}&cursor=${cursor}` });
    const elapsed = Number(process.hrtime.bigint() - started);
    if (res.statusCode !== 200) throw new Error(`page answered ${res.statusCode}: ${res.body}`);
    const afterSeq = Number(Buffer.from(cursor, 'base64url').toString().slice('user-'.length));
    const storeStarted = process.hrtime.bigint();
    store.listAfter(afterSeq, limit + 1);
    const storeElapsed = Number(process.hrtime.bigint() - storeStarted);
    // Let the event loop turn, as it does between requests on a real socket: inject alone never reaches
    // the check phase, so each response's deferred 'close' work (and its memory) would pile up.
    await new Promise((resolve) => setImmediate(resolve));
    if (index >= WARMUP) {
      http.push(elapsed);
      range.push(storeElapsed);
    }
  }
  return { http: stats(http), store: stats(range) };
}

if (process.argv.includes('--postgres')) {
  await postgresPages();
  process.exit(0);
}

/** The first page and the 50,000th of 1,000,000 users in PostgreSQL, 2,000 timed requests each, interleaved. */
async function postgresPages() {
  const USERS = 1_000_000;
  const LIMIT = 20;
  const REQUESTS = 2_000;
  const server = await startBenchPostgres();
  const logger = createLogger('silent', 'bench');
  const users = await openPostgresUsers(
    { url: server.url, poolMax: 10, migrationTimeoutMs: 600_000 },
    logger,
    createRegistry(),
  );
  const filling = process.hrtime.bigint();
  await fillUsers(server.url, USERS);
  const fillSeconds = Number(process.hrtime.bigint() - filling) / 1e9;
  const app = await buildApp({ logger, store: users.store, orders: [], clock: Date.now });
  await app.ready();
  const pages = [
    { name: 'first page', url: `/api/users/page?limit=${LIMIT}` },
    { name: '50,000th page', url: `/api/users/page?limit=${LIMIT}&cursor=${encodeCursor(`user-${USERS - LIMIT}`)}` },
  ];
  const samples = pages.map(() => []);
  for (let i = 0; i < 200 + REQUESTS; i++) {
    for (const [index, page] of pages.entries()) {
      const started = process.hrtime.bigint();
      const res = await app.inject({ method: 'GET', url: page.url });
      const elapsed = Number(process.hrtime.bigint() - started);
      if (res.statusCode !== 200 || res.json().items.length !== LIMIT)
        throw new Error(`${page.name} answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
      if (i >= 200) samples[index].push(elapsed);
    }
  }
  await app.close();
  await users.close();
  await server.stop();
  const results = samples.map(stats);
  console.log(
    `node ${process.version}, PostgreSQL (embedded) with ${USERS.toLocaleString('en-US')} users (inserted in ` +
      `${fillSeconds.toFixed(1)} s), limit ${LIMIT}, ${REQUESTS} timed requests per page after 200 warm-up, ` +
      `interleaved\n`,
  );
  console.log('| page | inject median µs | inject p99 µs | median vs first page |');
  console.log('|---|---:|---:|---:|');
  for (const [index, page] of pages.entries()) {
    console.log(
      `| ${page.name} | ${results[index].median.toFixed(1)} | ${results[index].p99.toFixed(1)} | ` +
        `${(results[index].median / results[0].median).toFixed(2)}× |`,
    );
  }
}

const rows = [];
for (const users of SIZES) {
  const store = fill(users);
  const app = await buildApp({ logger: createLogger('silent', 'bench'), store, orders: [], clock: Date.now });
  await app.ready();
  for (const limit of LIMITS) rows.push({ users, limit, ...(await measure(app, store, users, limit)) });
  await app.close();
}

const fmt = (us) => us.toFixed(1).padStart(8);
console.log(
  `node ${process.version}, ${PAGES} pages per row after ${WARMUP} warm-up pages, cursors spread over all ids\n`,
);
console.log('|     users | limit | inject median µs | inject p99 µs | store median µs | median vs 1,000 users |');
console.log('|----------:|------:|-----------------:|--------------:|----------------:|----------------------:|');
for (const row of rows) {
  const base = rows.find((other) => other.users === SIZES[0] && other.limit === row.limit);
  const ratio = (row.http.median / base.http.median).toFixed(2);
  console.log(
    `| ${row.users.toLocaleString('en-US').padStart(9)} | ${String(row.limit).padStart(5)} | ` +
      `${fmt(row.http.median).padStart(16)} | ${fmt(row.http.p99).padStart(13)} | ` +
      `${fmt(row.store.median).padStart(15)} | ${`${ratio}×`.padStart(21)} |`,
  );
}
