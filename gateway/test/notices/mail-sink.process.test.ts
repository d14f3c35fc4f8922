import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createTransport } from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../../scripts/paths.mjs';

describe('npm run mail-sink', () => {
  it('prints each message it receives: From, To, Subject, Message-ID and the text', async () => {
    const sink = spawn(process.execPath, ['scripts/mail-sink.mjs'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, MAIL_SINK_PORT: '0' },
    });
    let output = '';
    sink.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await expect
        .poll(() => output, { timeout: 20_000, interval: 50 })
        .toMatch(/^mail-sink: listening on smtp:\/\/127\.0\.0\.1:\d+; Ctrl-C stops it\n/);
      const port = Number(/:(\d+);/.exec(output)?.[1]);
      await createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true }).sendMail({
        from: 'API team <api@example.com>',
        to: 'billing@acme.example',
        subject: 'API v1 will be removed in 1 day, on 2027-01-01',
        messageId: '<notice-1@example.com>',
        text: 'Hello Acme Billing,\n\nVersion 1 of the API is deprecated.',
      });
      await expect
        .poll(() => output, { timeout: 5_000, interval: 50 })
        .toContain('Version 1 of the API is deprecated.');
      expect(output).toContain(
        'From: "API team" <api@example.com>\nTo: billing@acme.example\nSubject: API v1 will be removed in 1 day, on ' +
          '2027-01-01\nMessage-ID: <notice-1@example.com>\n',
      );
    } finally {
      sink.kill('SIGTERM');
    }
  }, 30_000);

  it('stops within 3 s of a SIGINT to `npm run mail-sink` alone, while a pooled SMTP connection stays open', async () => {
    // --silent: npm prints no banner, so the first line is the sink's.
    const npm = spawn('npm', ['run', '--silent', 'mail-sink'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, MAIL_SINK_PORT: '0' },
    });
    const exited = once(npm, 'exit');
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let transport: ReturnType<typeof createTransport> | undefined;
    try {
      await expect.poll(() => output, { timeout: 20_000, interval: 50 }).toMatch(/listening on smtp:\/\/[\d.]+:\d+;/);
      const port = Number(/:(\d+);/.exec(output)?.[1]);
      transport = createTransport({ pool: true, host: '127.0.0.1', port, secure: false, ignoreTLS: true });
      await transport.sendMail({ from: 'api@example.com', to: 'billing@acme.example', text: 'kept open' });
      const signalled = performance.now();
      npm.kill('SIGINT');
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
      expect(performance.now() - signalled).toBeLessThan(3_000);
    } finally {
      transport?.close();
      npm.kill('SIGKILL');
    }
  }, 30_000);
});
