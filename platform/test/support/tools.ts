/**
 * For a vitest file that needs a tool npm cannot install (test/tools/tools.mjs lists them: `prometheus` for
 * promtool and prometheus, `kubectl`). `npm test` installs them first where it can (test/tools/test-tools.mjs);
 * where it could not, the suites that need one are skipped, with the reason and the install command in their
 * title and on stderr, and everything else runs. With CI=true a missing tool fails the file instead.
 *
 *   describeWithTool('kubectl', 'kustomize builds every overlay', () => { … });
 *
 * works like `describe(title, body)` when the tool's executables are on PATH.
 */
import { describe } from 'vitest';
import { toolStatus, type ToolName } from '../../../test/tools/tools.mjs';

export function describeWithTool(tool: ToolName, title: string, body: () => void): void {
  const status = toolStatus(tool);
  if (status.available) {
    describe(title, body);
    return;
  }
  if (status.mustFail) throw new Error(`${title}: cannot run with CI=true: ${status.reason}`);
  process.stderr.write(`SKIPPED "${title}": ${status.reason}\n`);
  describe.skip(`${title} (skipped: ${status.reason})`, body);
}
