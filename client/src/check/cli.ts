#!/usr/bin/env node
import { runCheck } from './run.js';

process.exitCode = await runCheck({
  argv: process.argv.slice(2),
  env: process.env,
  now: () => new Date(),
  fetch: globalThis.fetch,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
