import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entries, repoRoot } from '../../scripts/paths.mjs';
import { designPolicyFile } from './support/helpers.js';

describe('the built gateway with a bad configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-config-'));
  const early = join(dir, 'early.json');
  writeFileSync(
    early,
    JSON.stringify({
      ...designPolicyFile,
      versions: [
        { version: 1, status: 'deprecated', announced: '2026-06-01', sunset: '2026-09-01T00:00:00Z', successor: 2 },
        { version: 2, status: 'current' },
      ],
    }),
  );
  const missing = join(dir, 'absent.json');
  it.each([
    [
      { API_VERSIONS_FILE: early },
      `invalid configuration: API_VERSIONS_FILE: ${early} is invalid at versions.0.sunset: version 1: sunset ` +
        `2026-09-01T00:00:00.000Z is less than 6 calendar months after announced 2026-06-01T00:00:00.000Z (earliest ` +
        `2026-12-01T00:00:00.000Z)`,
    ],
    [{ API_VERSIONS_FILE: missing }, `invalid configuration: API_VERSIONS_FILE: cannot read ${missing} (ENOENT)`],
    [
      { GATEWAY_CLOCK_START: '2029-10-03', NODE_ENV: 'production' },
      'invalid configuration: GATEWAY_CLOCK_START: moves the clock for a rehearsal and is refused with ' +
        'NODE_ENV=production (unset it; GET /versions?at= previews a date in production)',
    ],
    [{ GATEWAY_PORT: 'eighty' }, 'invalid configuration: GATEWAY_PORT: must be a port number (0-65535) (got "eighty")'],
    [
      { SHUTDOWN_DELAY_MS: '60000' },
      'invalid configuration: SHUTDOWN_DELAY_MS: must be at most 30000 ms (got "60000")',
    ],
    [
      { ADMIN_TOKEN: 'short-token' },
      'invalid configuration: ADMIN_TOKEN: must be at least 16 characters (got 11; value not shown)',
    ],
    [
      { DATABASE_URL: 'mysql://gw:s3cret@db/fleet' },
      'invalid configuration: DATABASE_URL: must start with postgres:// or postgresql:// (got ' +
        '"mysql://gw:***@db/fleet")',
    ],
    [
      { SMTP_URL: 'smtp://notices:s3cret@mail', NOTICE_FROM: 'a@example.com' },
      'invalid configuration: SMTP_URL: must name a port, e.g. smtp://mail.example.com:25 (got ' +
        '"smtp://notices:***@mail")',
    ],
    [
      { SMTP_URL: 'smtp://mail:25', NOTICE_FROM: 'nobody' },
      'invalid configuration: NOTICE_FROM: must be one e-mail address, optionally with a name: "API team ' +
        '<api@example.com>" (got "nobody")',
    ],
    [
      { NOTICES_INTERVAL_MS: '0' },
      'invalid configuration: NOTICES_INTERVAL_MS: must be between 1000 and 3600000 ms (got "0")',
    ],
    [
      { NOTICES_SEND_TIMEOUT_MS: '0' },
      'invalid configuration: NOTICES_SEND_TIMEOUT_MS: must be between 1000 and 60000 ms (got "0")',
    ],
  ])('refuses to start: exit 1 and one stderr line naming the variable (%j)', (env, line) => {
    expect(existsSync(join(repoRoot, entries.gateway)), `${entries.gateway} missing: run npm run build`).toBe(true);
    const result = spawnSync(process.execPath, [entries.gateway], {
      cwd: repoRoot,
      env: {
        ...process.env,
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: '0',
        GATEWAY_ADMIN_PORT: '0',
        LOG_LEVEL: 'silent',
        ...env,
      },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`${line}\n`);
  });
});
