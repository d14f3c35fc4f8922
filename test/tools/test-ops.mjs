// `npm run test:ops`: promtool checks the scrape config, the rules and the rules' unit tests. Without promtool
// (test/tools/test-tools.mjs could not install it) they are printed as skipped, not passed; with CI=true, failed.
import { spawnSync } from 'node:child_process';
import { repoRoot } from '../../scripts/paths.mjs';
import { toolStatus } from './tools.mjs';

const checks = [
  ['check', 'config', 'ops/prometheus/prometheus.yml'],
  ['check', 'rules', 'ops/prometheus/rules.yml'],
  ['test', 'rules', 'ops/prometheus/rules.test.yml'],
];

const status = toolStatus('prometheus');
if (!status.available) {
  const what = `${checks.length} promtool checks (${checks.map((args) => args.join(' ')).join('; ')})`;
  if (status.mustFail) {
    console.error(`test:ops: FAILED with CI=true: ${what} cannot run: ${status.reason}`);
    process.exit(1);
  }
  console.log(`test:ops: SKIPPED ${what}: ${status.reason}`);
  process.exit(0);
}
for (const args of checks) {
  const result = spawnSync('promtool', args, { cwd: repoRoot, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
