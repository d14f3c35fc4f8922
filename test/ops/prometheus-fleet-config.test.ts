/**
 * ops/prometheus/prometheus.fleet.yml, the Prometheus configuration of docker-compose.fleet.yml,
 * passes `promtool check config` (rule file included) as prometheus.yml does in `npm run test:ops`.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { describeWithTool } from '../../platform/test/support/tools.js';

const FLEET_CONFIG = 'ops/prometheus/prometheus.fleet.yml';

function checkConfig(file: string): { status: number | null; output: string } {
  const result = spawnSync('promtool', ['check', 'config', file], { cwd: repoRoot, encoding: 'utf8', timeout: 30_000 });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describeWithTool('prometheus', `promtool check config ${FLEET_CONFIG}`, () => {
  it('accepts it and its rule file', () => {
    const { status, output } = checkConfig(FLEET_CONFIG);
    expect(status, output).toBe(0);
    expect(output).toContain(`SUCCESS: ${FLEET_CONFIG} is valid prometheus config file syntax`);
    expect(output).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('is not vacuous: a DNS discovery of an unknown record type is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'prometheus-fleet-'));
    try {
      copyFileSync(join(repoRoot, 'ops/prometheus/rules.yml'), join(dir, 'rules.yml'));
      writeFileSync(
        join(dir, 'prometheus.yml'),
        readFileSync(join(repoRoot, FLEET_CONFIG), 'utf8').replace('type: A', 'type: AAAAA'),
      );
      const { status, output } = checkConfig(join(dir, 'prometheus.yml'));
      expect(status, output).not.toBe(0);
      expect(output).toMatch(/invalid DNS-SD records type AAAAA/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
