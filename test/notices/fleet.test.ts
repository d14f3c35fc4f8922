/**
 * Deprecation notices from built gateway processes on one PostgreSQL (docs/runbook.md#deprecation-notices):
 * one e-mail per consumer and milestone from two replicas, nothing again after a restart, a sender killed
 * mid-batch leaving the rest to the other, an SMTP server down and then up. The policy is the shipped one
 * (v1 deprecated, its sunset years ahead): whichever milestone is due today, each consumer gets it once.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPostgres, type TestPostgres } from '../../platform/test/support/postgres.js';
import { startGateway } from '../e2e/process-stack.js';
import { startService, type ServiceProcess } from '../../platform/test/support/service-process.js';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { startTestSmtp, type TestSmtp } from '../../gateway/test/support/receivers.js';

const DAY_MS = 86_400_000;

let postgres: TestPostgres;
let databaseUrl: string;
let sql: pg.Client;
let smtp: TestSmtp;
let backend: ServiceProcess;
const gateways: ServiceProcess[] = [];

/** Checks every second; a claim lasts BACKEND_TIMEOUT_MS + 2 × NOTICES_SEND_TIMEOUT_MS = 5 s. */
const startNoticeGateway = async (): Promise<ServiceProcess> => {
  const gateway = await startGateway(backend.apiUrl, {
    DATABASE_URL: databaseUrl,
    SMTP_URL: smtp.url,
    NOTICE_FROM: 'API team <api@example.com>',
    NOTICES_INTERVAL_MS: '1000',
    NOTICES_SEND_TIMEOUT_MS: '2000',
    BACKEND_TIMEOUT_MS: '1000',
    API_VERSIONS_WATCH: 'false',
  });
  gateways.push(gateway);
  return gateway;
};

/** Consumers of v1 with a call yesterday, written straight into the shared store (as any replica's ledger would). */
async function addConsumers(ids: readonly string[]): Promise<void> {
  const yesterday = new Date(Date.now() - DAY_MS).toISOString();
  for (const id of ids) {
    await sql.query(
      'INSERT INTO gateway.consumers (id, name, contact_email, created_at, seq) VALUES ($1, $2, $3, now(), 0)',
      [id, `Team ${id}`, `${id}@example.net`],
    );
    await sql.query(
      'INSERT INTO gateway.usage (consumer_id, version, operation, day, requests, first_seen, last_seen) VALUES ' +
        "($1, 1, 'GET /v1/orders/{id}', $2::timestamptz::date, 5, $2, $2)",
      [id, yesterday],
    );
  }
}

const recipientsOf = (smtpServer: TestSmtp): string[] =>
  smtpServer.messages.map((mail) => (Array.isArray(mail.to) ? '' : (mail.to?.value[0]?.address ?? ''))).sort();

/** The gateway's consumer_notices_total for one result, summed over milestones and channels. */
async function noticesCounted(gateway: ServiceProcess, result: string): Promise<number> {
  const text = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('consumer_notices_total{') && line.includes(`result="${result}"`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  postgres = await startTestPostgres();
  databaseUrl = await postgres.createDatabase();
  smtp = await startTestSmtp();
  backend = await startService('backend', { BACKEND_HOST: '127.0.0.1', BACKEND_PORT: '0', BACKEND_ADMIN_PORT: '0' });
  sql = new pg.Client({ connectionString: databaseUrl });
}, 90_000);
afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  await sql?.end();
  await backend?.stop();
  await smtp?.close();
  await postgres?.close();
});

describe('notices from a fleet of gateways on one PostgreSQL', () => {
  const fleet = Array.from({ length: 20 }, (_, i) => `fleet-${String(i).padStart(2, '0')}`);

  it('two replicas send exactly one e-mail per consumer and milestone', async () => {
    const [a, b] = await Promise.all([startNoticeGateway(), startNoticeGateway()]);
    await sql.connect();
    await addConsumers(fleet);
    await eventually('20 notices', () => smtp.messages.length >= 20, { timeoutMs: 30_000 });
    // Several more checks on both replicas.
    await pause(4_000);
    expect(recipientsOf(smtp)).toEqual(fleet.map((id) => `${id}@example.net`));
    expect(new Set(smtp.messages.map((mail) => mail.messageId)).size).toBe(20);
    expect((await noticesCounted(a, 'sent')) + (await noticesCounted(b, 'sent'))).toBe(20);
    const { rows } = await sql.query<{ milestone: string; count: string }>(
      "SELECT milestone, count(*) AS count FROM gateway.notices WHERE status = 'sent' GROUP BY milestone",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.count).toBe('20');
  }, 90_000);

  it('sends nothing again after a restart', async () => {
    await Promise.all(gateways.splice(0).map((gateway) => gateway.stop()));
    const restarted = await startNoticeGateway();
    // It checked at start and then every second.
    await pause(4_000);
    expect(smtp.messages).toHaveLength(20);
    expect(await noticesCounted(restarted, 'sent')).toBe(0);
  }, 60_000);

  it(
    'a sender SIGKILLed mid-batch leaves the rest to the other replica; a possible duplicate is counted and keeps ' +
      'its Message-ID',
    async () => {
      const [alone] = gateways;
      const batch = Array.from({ length: 8 }, (_, i) => `killed-${i}`);
      const before = smtp.messages.length;
      // Each message takes a second to be accepted: the batch is under way when the sender dies.
      smtp.delayMs = 1_000;
      await addConsumers(batch);
      await eventually('the batch under way', () => smtp.messages.length >= before + 2, { timeoutMs: 20_000 });
      alone!.child.kill('SIGKILL');
      await alone!.exited;
      gateways.splice(0);
      const other = await startNoticeGateway();
      await eventually('every consumer of the batch told', () => new Set(recipientsOf(smtp)).size === 28, {
        timeoutMs: 40_000,
      });
      await pause(3_000);
      smtp.delayMs = 0;
      const received = smtp.messages.slice(before);
      const duplicates = received.length - batch.length;
      const resent = await noticesCounted(other, 'resent');
      process.stdout.write(
        `sender killed mid-batch: ${received.length} e-mails for ${batch.length} consumers, ${resent} counted resent\n`,
      );
      // At most the notice in flight when the sender died, and every duplicate counted as possibly sent twice.
      expect(duplicates).toBeLessThanOrEqual(1);
      expect(resent).toBeGreaterThanOrEqual(duplicates);
      expect(resent).toBeLessThanOrEqual(1);
      expect(new Set(received.map((mail) => mail.messageId)).size).toBe(batch.length);
      const { rows } = await sql.query<{ count: string }>(
        "SELECT count(*) AS count FROM gateway.notices WHERE status = 'sent' AND unconfirmed > 0",
      );
      expect(Number(rows[0]?.count)).toBe(resent);
    },
    120_000,
  );

  it('an SMTP server down, then up: the notice is retried and delivered after', async () => {
    const [gateway] = gateways;
    const before = smtp.messages.length;
    await smtp.close();
    await addConsumers(['late-mailbox']);
    await eventually('a failed attempt', async () => (await noticesCounted(gateway!, 'retried')) >= 1, {
      timeoutMs: 15_000,
    });
    await smtp.listen();
    await eventually('the notice delivered', () => smtp.messages.length > before, { timeoutMs: 30_000 });
    expect(recipientsOf({ ...smtp, messages: smtp.messages.slice(before) })).toEqual(['late-mailbox@example.net']);
  }, 90_000);

  it('a pin moved by the platform team on one replica is told once, though both replicas send', async () => {
    const [first] = gateways;
    const second = await startNoticeGateway();
    const before = smtp.messages.length;
    await sql.query(
      'INSERT INTO gateway.consumers (id, name, contact_email, created_at, seq, pinned_version, pinned_at) ' +
        "VALUES ('repinned', 'Team repinned', 'repinned@example.net', now(), 0, 1, now())",
    );
    const moved = await fetch(`${first!.adminUrl}/consumers/repinned/version`, {
      method: 'PUT',
      body: '{"version":2}',
    });
    expect(moved.status).toBe(200);
    await eventually('the notice of the move', () => smtp.messages.length > before, { timeoutMs: 20_000 });
    // Several more checks on both replicas.
    await pause(4_000);
    const sent = smtp.messages.slice(before);
    expect(sent.map((mail) => mail.subject)).toEqual(['Your API pin was moved from v1 to v2']);
    expect(recipientsOf({ ...smtp, messages: sent })).toEqual(['repinned@example.net']);
    const { rows } = await sql.query<{ status: string }>(
      "SELECT status FROM gateway.notices WHERE consumer_id = 'repinned' AND milestone = 'pin_moved'",
    );
    expect(rows).toEqual([{ status: 'sent' }]);
    await second.stop();
    gateways.splice(gateways.indexOf(second), 1);
  }, 90_000);
});
