import { afterEach, describe, expect, it } from 'vitest';
import type { NoticesConfig } from '../../src/config.js';
import { buildTestGateway, type TestGateway } from '../support/helpers.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';
import { idleNoticeStore } from './idle-store.js';

const config = (email: NoticesConfig['email']): NoticesConfig => ({
  email,
  intervalMs: 60_000,
  publicBaseUrl: undefined,
  sendTimeoutMs: 1_000,
});

const OFF = 'e-mail notices are off: SMTP_URL is not set; webhooks still go out (docs/runbook.md#deprecation-notices)';

let stub: StubBackend;
let gateway: TestGateway;

afterEach(async () => {
  await gateway.app.close();
  await stub.close();
});

describe('the notices at start', () => {
  it('say once that e-mail notices are off when SMTP_URL is not set', async () => {
    stub = await startStubBackend();
    gateway = await buildTestGateway(stub.url, { notices: { store: idleNoticeStore(), config: config(undefined) } });
    expect(gateway.logs.filter((line) => line.msg === OFF)).toEqual([expect.objectContaining({ level: 30 })]);
  });

  it('say nothing of the kind when SMTP_URL is set', async () => {
    stub = await startStubBackend();
    const email = { smtpUrl: 'smtp://127.0.0.1:2525', from: { name: 'API team', address: 'api@example.com' } };
    gateway = await buildTestGateway(stub.url, { notices: { store: idleNoticeStore(), config: config(email) } });
    expect(gateway.logs.filter((line) => String(line.msg).startsWith('e-mail notices are off'))).toEqual([]);
  });
});
