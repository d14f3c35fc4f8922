import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '../../scripts/paths.mjs';
import { parseCheckArgs } from '../src/check/args.js';

/**
 * The CI jobs a consumer copies (the package's README, docs/runbook.md "1. Announce") are YAML that parses, and
 * run a version-router-check command line the CLI accepts.
 */
const PAGES = ['client/README.md', 'docs/runbook.md'];

/** Every `version-router-check …` command line in the YAML blocks of a page, each block parsed first. */
function commandLines(page: string): string[] {
  const markdown = readFileSync(join(repoRoot, page), 'utf8');
  const blocks = [...markdown.matchAll(/```yaml\n([^]*?)```/g)].map((match) => match[1] as string);
  const lines: string[] = [];
  for (const block of blocks) {
    // A job copied into a workflow sits under `jobs:`, indented; parsing it alone needs the indent off.
    const parsed = parse(block.replace(/^ {2}/gm, '')) as unknown;
    const scripts = JSON.stringify(parsed).match(/version-router-check [^"|>]*/g) ?? [];
    lines.push(...scripts.map((script) => script.trim()));
  }
  return lines;
}

describe('the CI jobs the docs give consumers', () => {
  it.each(PAGES)('%s: each parses and runs an accepted command line', (page) => {
    const lines = commandLines(page);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      const argv = line.split(/\s+/).slice(1);
      expect(parseCheckArgs(argv), line).toMatchObject({ url: 'https://api.example.com' });
    }
  });
});
