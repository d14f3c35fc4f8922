// `npm run k8s:sync`: rewrites the copies deploy/kubernetes needs from their sources
// (scripts/kubernetes-copies.mjs says which); docs/deployment.md#kubernetes.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubernetesCopies } from './kubernetes-copies.mjs';
import { repoRoot } from './paths.mjs';

for (const { target, source, content } of kubernetesCopies()) {
  const path = join(repoRoot, target);
  let current;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === content) {
    console.log(`${target}: up to date with ${source}`);
  } else {
    writeFileSync(path, content);
    console.log(`${target}: written from ${source}`);
  }
}
