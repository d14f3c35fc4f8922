// `npm run openapi:update`: rewrites openapi/v{n}.json from the backend's generated documents, and the documents
// of the versions the policy file declares as changes from the newest one, as the gateway derives them. It refuses
// (exit 1) when a difference is breaking for the clients of a version, unless --allow-breaking is given:
// a breaking change belongs in a new major version (docs/behaviour.md#contract-guard).
// Runs the built backend (the npm script builds first), from the repository root as npm runs scripts;
// `--snapshots <dir>` compares with and writes another directory, `--policy <file>` reads another policy file
// (the tests use both).
import { parseArgs } from 'node:util';
import { compileTranslations } from '../gateway/dist/src/translation/compile.js';
import { translatedVersions } from '../gateway/dist/src/translation/derive-document.js';
import { loadPolicyFile } from '../gateway/dist/src/versions/policy-file.js';
import {
  describeDiffs,
  diffSnapshots,
  hasBreaking,
  writeSnapshots,
} from '../services/users-orders/dist/tools/openapi-snapshots.js';

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      'allow-breaking': { type: 'boolean', default: false },
      snapshots: { type: 'string', default: 'openapi' },
      policy: { type: 'string', default: 'ops/versions.json' },
    },
  }));
} catch (err) {
  console.error(`${err.message}\nusage: npm run openapi:update [-- --allow-breaking]`);
  process.exit(2);
}

let policy;
try {
  // As the gateway loads it: the modules its changes name too, each checked on its own examples.
  policy = await loadPolicyFile(options.policy);
} catch (err) {
  console.error(err.message);
  process.exit(2);
}
const compiled = compileTranslations(policy.file, policy.modules);
const diffs = await diffSnapshots(options.snapshots, undefined, translatedVersions(compiled));
const report = describeDiffs(diffs);
if (report !== '') console.log(report);

if (hasBreaking(diffs) && !options['allow-breaking']) {
  console.error(
    'Refused: the differences marked BREAKING would break clients of a published version. Put the change in a new ' +
      'major version instead (its presenter replaces this one, and this version is declared as changes to it: ' +
      'docs/architecture.md#adding-a-version-3), or rerun with --allow-breaking if no client can be affected.',
  );
  process.exit(1);
}
const touched = writeSnapshots(diffs);
console.log(touched.length === 0 ? 'Snapshots are up to date.' : touched.map((file) => `updated ${file}`).join('\n'));
