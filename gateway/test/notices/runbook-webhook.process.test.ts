import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../scripts/paths.mjs';
import { eventually } from '../../../platform/test/support/eventually.mjs';
import { movedClockEnv } from '../../../platform/test/support/faketime.js';
import type { NoticeMessage } from '../../src/notices/message.js';
import type { ClaimedNotice } from '../../src/notices/store.js';
import { createWebhookChannel } from '../../src/notices/webhook.js';

/**
 * The webhook receiver docs/runbook.md ("Deprecation notices") gives for watching notices on a local stack, run as
 * written (on a free port instead of 8099): it accepts what the gateway's webhook channel signs with the consumer's
 * secret, and refuses a notice signed with another.
 */
function runbookReceiver(): string {
  const runbook = readFileSync(join(repoRoot, 'docs/runbook.md'), 'utf8');
  const script = /^WEBHOOK_SECRET='whsec_…' node -e '\n([^']*)'\n/m.exec(runbook)?.[1];
  if (script === undefined) throw new Error('docs/runbook.md has no "WEBHOOK_SECRET=\'whsec_…\' node -e" receiver');
  return script;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const secretOf = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const message: NoticeMessage = {
  id: 'msg_runbook0000000000000000',
  type: 'version.sunset_in_90_days',
  data: {
    consumer: { id: 'gamma-shop', name: 'Gamma Shop' },
    milestone: 'sunset_in_90_days',
    version: 1,
    phase: 'deprecated',
    sunset: '2027-01-01T00:00:00.000Z',
    days_left: 35,
    successor: 2,
    pinned_version: 1,
    api_key_required_from: null,
    brownout: null,
    brownouts: [],
    requests_since: '2026-10-23T12:00:00.000Z',
    operations: [],
    move: null,
    links: { migration_guide: '/versions/1/changes', deprecations: '/deprecations', changelog: '/changelog' },
  },
};

function noticeTo(webhookUrl: string, webhookSecret: string): ClaimedNotice {
  return {
    consumerId: 'gamma-shop',
    version: 1,
    milestone: 'sunset_in_90_days',
    occasion: '',
    channel: 'webhook',
    messageId: message.id,
    attempts: 0,
    firstAttemptMs: undefined,
    unconfirmed: 0,
    consumer: { name: 'Gamma Shop', contactEmail: null, webhookUrl, webhookSecret },
  };
}

let receiver: ChildProcess | undefined;
afterEach(() => {
  receiver?.kill('SIGTERM');
  receiver = undefined;
});

describe("the runbook's local webhook receiver", () => {
  it('prints a notice the gateway signed with the secret, and refuses one signed with another', async () => {
    const secret = secretOf();
    const port = await freePort();
    receiver = spawn(process.execPath, ['-e', runbookReceiver().replaceAll('8099', String(port))], {
      cwd: repoRoot,
      // On the test's clock (moved by faketime, when it is): the receiver checks the signature's timestamp.
      env: { ...movedClockEnv(), PATH: process.env.PATH, WEBHOOK_SECRET: secret },
    });
    let output = '';
    receiver.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    receiver.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const url = `http://127.0.0.1:${port}/`;
    await eventually('the receiver listens', () => output.includes(`webhook receiver on ${url}\n`), {
      timeoutMs: 20_000,
      lastSeen: () => output,
    });

    const channel = createWebhookChannel({ timeoutMs: 5_000, clock: Date.now });
    await channel.deliver(message, noticeTo(url, secret));
    // The receiver answers before its line reaches this process through the pipe.
    const body = JSON.stringify({ type: message.type, data: message.data });
    await eventually('the notice is printed', () => output.includes(`signature ok ${body}\n`), {
      timeoutMs: 5_000,
      lastSeen: () => output,
    });

    await expect(channel.deliver(message, noticeTo(url, secretOf()))).rejects.toThrow('webhook answered 401');
    await eventually('the refusal is printed', () => output.includes('\nrefused: '), {
      timeoutMs: 5_000,
      lastSeen: () => output,
    });
  }, 30_000);
});
