/**
 * The README's curls against `localhost:8080`, sent as curl sends them (`-d`: a POST with curl's form Content-Type,
 * `-H`: a header) to another base URL, and checked against what the README says of each: `# v1 +
 * Deprecation/Sunset/Link` is v1 answered 200 with those headers, `# header-selected v2` v2 answered 200 without
 * them, a POST a 201.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/paths.mjs';

export interface ReadmeCurl {
  /** The README line, as written. */
  line: string;
  method: 'GET' | 'POST';
  /** Path and query, from the first `/` after `localhost:8080`. */
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** What the comment promises: the version that answers, and whether with the deprecation headers. */
  promise: { version: string; deprecated: boolean } | 'created';
}

/** The README's curl lines. */
export function readmeCurls(readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')): ReadmeCurl[] {
  return readme
    .split('\n')
    .filter((line) => /^curl .*localhost:8080\//.test(line))
    .map((line) => {
      const [command = '', comment = ''] = line.split(/\s+#\s*/, 2);
      const path = /localhost:8080(\/\S*)/.exec(command)?.[1] ?? '/';
      const headers = Object.fromEntries(
        [...command.matchAll(/-H '([^:']+):\s*([^']*)'/g)].map((match) => [match[1] ?? '', match[2] ?? '']),
      );
      const body = /-d '([^']*)'/.exec(command)?.[1];
      if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      const version = /\bv(\d+)\b/.exec(comment)?.[1];
      return {
        line,
        method: body === undefined ? 'GET' : 'POST',
        path,
        headers,
        body,
        promise: version === undefined ? 'created' : { version, deprecated: comment.includes('Deprecation') },
      };
    });
}

/** What is not as the README says when its curls are sent to `baseUrl`: one line per difference, [] when none. */
export async function readmeCurlProblems(baseUrl: string, curls = readmeCurls()): Promise<string[]> {
  const problems: string[] = [];
  for (const curl of curls) {
    const res = await fetch(`${baseUrl}${curl.path}`, { method: curl.method, headers: curl.headers, body: curl.body });
    const text = await res.text();
    const say = (what: string) => problems.push(`${curl.line}: ${what} (${res.status} ${text.slice(0, 200)})`);
    if (curl.promise === 'created') {
      if (res.status !== 201) say('not 201');
      continue;
    }
    const { version, deprecated } = curl.promise;
    if (res.status !== 200) say('not 200');
    if (res.headers.get('api-version') !== version) say(`API-Version is not ${version}`);
    for (const name of ['deprecation', 'sunset', 'link'])
      if ((res.headers.get(name) !== null) !== deprecated)
        say(deprecated ? `no ${name} header` : `a ${name} header on a current version`);
  }
  return problems;
}
