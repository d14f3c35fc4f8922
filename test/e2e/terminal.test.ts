import { spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { expect, it } from 'vitest';
import { entries, repoRoot } from '../../scripts/paths.mjs';

/** Runs the built backend with a pseudo-terminal as stdout (util-linux `script`) until `until` matches its output. */
function outputOnTerminal(until: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const command =
      `BACKEND_HOST=127.0.0.1 BACKEND_PORT=0 BACKEND_ADMIN_PORT=0 LOG_LEVEL=info exec ` +
      `${process.execPath} ${entries.backend}`;
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: repoRoot,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(
      () => finish(new Error(`no match for ${String(until)} within 10 s in: ${output}`)),
      10_000,
    );
    function finish(error?: Error) {
      clearTimeout(timer);
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      if (error === undefined) resolve(output);
      else reject(error);
    }
    child.stdout.on('data', (chunk: Buffer) => {
      // Colours are for the eye; the assertions read the text.
      output += stripVTControlCharacters(chunk.toString());
      if (until.test(output)) finish();
    });
    child.once('error', (err) => finish(err));
  });
}

it('prints readable lines prefixed with the process name when stdout is a terminal', async () => {
  const output = await outputOnTerminal(/INFO: listening/);
  expect(output).toMatch(
    /^users-orders \d\d:\d\d:\d\d\.\d{3} INFO: listening \{"api":"http:\/\/127\.0\.0\.1:\d+","admin":"http:\/\/127\.0\.0\.1:\d+"\}\r?$/m,
  );
  expect(output).not.toMatch(/^\{"level"/m);
});
