// `npm run build` (and so `npm start`'s prestart): `tsc -b tsconfig.build.json`, through TypeScript's own build
// API so that it says what it is doing. A first build compiles every package, a minute or more on a busy machine;
// a line names each package as its compile begins, and the last line says what was compiled and how long it
// took. A package whose sources did not change is skipped, as tsc -b skips it, so a second build is about a
// second: one line, "up to date".
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './paths.mjs';

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
// Progress is diagnostics, on stderr: a script that builds first (`npm run openapi:update`) keeps stdout its own.
const say = (line) => console.error(`build: ${line}`);

const pretty = process.stdout.isTTY === true;
const host = ts.createSolutionBuilderHost(ts.sys, undefined, ts.createDiagnosticReporter(ts.sys, pretty));
const builder = ts.createSolutionBuilder(host, [join(repoRoot, 'tsconfig.build.json')], {});

/** A package by its folder (`platform`, `services/users-orders`), from its build config's path. */
const nameOf = (configFile) => relative(repoRoot, dirname(configFile));
/** The packages in build order, dependencies first; the root config only lists them. */
const packages = builder
  .getBuildOrder()
  .map(nameOf)
  .filter((name) => name !== '');

const compiled = [];
let failed = false;
for (let project = builder.getNextInvalidatedProject(); project; project = builder.getNextInvalidatedProject()) {
  // A package whose inputs are newer than its outputs but unchanged only has its outputs' times updated.
  if (project.kind !== ts.InvalidatedProjectKind.Build) {
    project.done();
    continue;
  }
  const name = nameOf(project.project);
  say(`compiling ${name} (${packages.indexOf(name) + 1} of ${packages.length})…`);
  if (project.done() !== ts.ExitStatus.Success) failed = true;
  compiled.push(name);
}

if (failed) {
  say(`failed after ${elapsed()}`);
  process.exit(1);
}
say(compiled.length === 0 ? `up to date (${elapsed()})` : `compiled ${compiled.join(', ')} in ${elapsed()}`);
