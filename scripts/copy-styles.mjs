// Part of `npm run build`: tsc compiles the gateway's pages but copies no other file, and each page reads its
// style sheet (a .css file beside its module) when its module loads, from dist/src/ as from src/.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from './paths.mjs';

const source = join(repoRoot, 'gateway/src');
const target = join(repoRoot, 'gateway/dist/src');
for (const file of readdirSync(source, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.css'))) {
  mkdirSync(dirname(join(target, file)), { recursive: true });
  copyFileSync(join(source, file), join(target, file));
}
