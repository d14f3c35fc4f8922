import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { eventually } from '../../platform/test/support/eventually.mjs';
import { freeLoopbackPort } from '../../platform/test/support/free-port.js';
import { sharedGatewayStore } from '../support/gateway-store.js';
import { npmUntilBanner, type NpmRun } from './npm-banner.js';

/**
 * docs/your-own-api.md followed as a user would: its stand-in backend (a few lines of node:http serving version 2 of
 * `/widgets/:id`, nothing of ours) runs as a file, its policy (version 1 declared as changes) is the gateway's, and
 * the README's command starts the gateway in front of it. What the test changes: the policy's dates, moved relative
 * to now (announced a month ago, the sunset in about a year), free loopback ports instead of 8080 and 9464, and the
 * run's shared consumer store instead of a new embedded one. The stand-in prints each request it gets, so the
 * test sees everything the gateway asked of it.
 */

const PAGE = 'docs/your-own-api.md';
const COMMAND = 'npm run start:gateway';
const DAY_MS = 86_400_000;

/** The fenced blocks of a Markdown file with the given language, in order. */
function codeBlocks(file: string, lang: string): string[] {
  const text = readFileSync(join(repoRoot, file), 'utf8');
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)]
    .filter(([, blockLang]) => blockLang === lang)
    .map(([, , body]) => body ?? '');
}

/** The README's line that starts the gateway in front of another API, and the variables it sets. */
function readmeCommand(): { line: string; variables: Record<string, string> } {
  const line = codeBlocks('README.md', 'sh')
    .flatMap((block) => block.split('\n'))
    .find((candidate) => candidate.includes(COMMAND));
  expect(line, `README.md shows \`${COMMAND}\` in a sh block`).toBeDefined();
  const words = (line ?? '').split('#')[0]!.trim().split(/\s+/);
  const assignments = words.slice(0, words.indexOf('npm'));
  expect(words.slice(assignments.length).join(' '), 'the command after its variables').toBe(COMMAND);
  return {
    line: line!,
    variables: Object.fromEntries(assignments.map((word) => word.split('=', 2) as [string, string])),
  };
}

const day = (offsetDays: number): string => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);

let dir: string;
let standIn: ChildProcess;
let standInOutput = '';
let backendUrl: string;
let sunset: string;
let gateway: NpmRun;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'your-own-api-'));
  const [backendCode] = codeBlocks(PAGE, 'js');
  const [policyText] = codeBlocks(PAGE, 'json');
  expect(backendCode, `${PAGE} shows the stand-in backend`).toBeDefined();
  expect(policyText, `${PAGE} shows the policy`).toBeDefined();

  writeFileSync(join(dir, 'widgets.mjs'), backendCode!);
  const port = await freeLoopbackPort();
  backendUrl = `http://127.0.0.1:${port}`;
  standIn = spawn(process.execPath, ['widgets.mjs'], {
    cwd: dir,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  standIn.stdout?.on('data', (chunk: Buffer) => (standInOutput += chunk.toString()));
  // Connected to, not asked: every request the stand-in prints is one the gateway sent.
  await eventually(
    'the stand-in backend to listen',
    () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.end();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      }),
    { timeoutMs: 15_000 },
  );

  const policy = JSON.parse(policyText!) as { versions: Record<string, unknown>[] };
  const [v1] = policy.versions;
  sunset = day(365);
  Object.assign(v1!, { announced: day(-30), sunset });
  writeFileSync(join(dir, 'versions.json'), JSON.stringify(policy));

  const { variables } = readmeCommand();
  expect(Object.keys(variables).sort(), 'the variables the README sets').toEqual(['API_VERSIONS_FILE', 'BACKEND_URL']);
  gateway = await npmUntilBanner(['run', '--silent', 'start:gateway'], {
    cwd: repoRoot,
    env: {
      ...sharedGatewayStore(),
      BACKEND_URL: backendUrl,
      API_VERSIONS_FILE: join(dir, 'versions.json'),
      API_VERSIONS_WATCH: 'false',
      LOG_LEVEL: 'info',
    },
    timeoutMs: 120_000,
  });
}, 180_000);

afterAll(async () => {
  if (gateway !== undefined) expect(await gateway.stop()).toBe(0);
  standIn?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

/** The requests the stand-in printed so far, one `METHOD path API-Version-Requested` line each. */
const standInRequests = (): string[] => standInOutput.split('\n').filter((line) => line !== '');

const V2_WIDGET = { id: 'w-1', name: 'Sprocket', price_cents: 1250, size: 'large', updated_at: '2026-11-01T09:00:00Z' };
const V1_WIDGET = { id: 'w-1', title: 'Sprocket', price: 12.5, size: 'L' };

describe('the gateway in front of a backend that is not ours (docs/your-own-api.md)', () => {
  it('runs the README command as shown on the page too', () => {
    expect(readFileSync(join(repoRoot, PAGE), 'utf8')).toContain(`\n${readmeCommand().line}\n`);
  });

  it('starts the gateway alone, and its banner names no example of our backend', () => {
    const output = gateway.output();
    expect(output).toContain('starting the gateway…\n');
    expect(output).not.toContain('"service":"users-orders"');
    expect(output).toMatch(/^API: {9}http:\/\/localhost:\d+$/m);
  });

  it('serves version 2 as the backend answers it, without deprecation headers', async () => {
    const res = await fetch(`${gateway.gatewayUrl}/v2/widgets/w-1`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(V2_WIDGET);
    expect(res.headers.get('api-version')).toBe('2');
    expect(res.headers.get('deprecation')).toBeNull();
    expect(res.headers.get('sunset')).toBeNull();
    expect(res.headers.get('api-deprecated-versions')).toBe('1');
  });

  it("presents version 1 from the backend's version 2, with its deprecation headers, in the path and header forms", async () => {
    for (const [path, headers] of [
      ['/v1/widgets/w-1', {}],
      ['/widgets/w-1', { 'api-version': '1' }],
    ] as const) {
      const res = await fetch(`${gateway.gatewayUrl}${path}`, { headers });
      expect(res.status, path).toBe(200);
      expect(await res.json()).toEqual(V1_WIDGET);
      expect(res.headers.get('api-version')).toBe('1');
      expect(res.headers.get('deprecation')).toBe('true');
      expect(res.headers.get('sunset')).toBe(new Date(`${sunset}T00:00:00Z`).toUTCString());
      expect(res.headers.get('link')).toBe('</v2/widgets/w-1>; rel="successor-version"');
    }
  });

  it('serves the default version, 2, to a request that names none', async () => {
    const res = await fetch(`${gateway.gatewayUrl}/widgets/w-1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('api-version')).toBe('2');
    expect(await res.json()).toEqual(V2_WIDGET);
  });

  it("passes the backend's own 404 on with version 1's headers", async () => {
    const res = await fetch(`${gateway.gatewayUrl}/v1/widgets/w-404`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'not found' });
    expect(res.headers.get('deprecation')).toBe('true');
  });

  it('knows nothing of our orders: not a resource of this policy, the JSON 404, never forwarded', async () => {
    const res = await fetch(`${gateway.gatewayUrl}/v1/orders/ord-1001`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not found' });
  });

  it('lists the versions of this policy', async () => {
    const res = await fetch(`${gateway.gatewayUrl}/versions`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { default_version: number; versions: Record<string, unknown>[] };
    expect(body.default_version).toBe(2);
    expect(body.versions.map(({ version, phase, sunset: at }) => ({ version, phase, sunset: at }))).toEqual([
      { version: 1, phase: 'deprecated', sunset: `${sunset}T00:00:00.000Z` },
      { version: 2, phase: 'current', sunset: null },
    ]);
  });

  it("answers the migration guide's 502 when the backend publishes no OpenAPI document, naming it in the log", async () => {
    const res = await fetch(`${gateway.gatewayUrl}/versions/1/changes`);
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: 'bad gateway', code: 502 });
    await eventually('the warn line', () => gateway.output().includes('"reason":"GET /v2/openapi.json answered 404"'), {
      timeoutMs: 5_000,
    });
  });

  it("asked the backend for nothing but the clients' requests, each at version 2's path", () => {
    const [widgets, others] = [
      standInRequests().filter((line) => line.includes(' /v2/widgets/')),
      standInRequests().filter((line) => !line.includes(' /v2/widgets/')),
    ];
    expect(widgets).toEqual([
      'GET /v2/widgets/w-1 -',
      'GET /v2/widgets/w-1 1',
      'GET /v2/widgets/w-1 1',
      'GET /v2/widgets/w-1 -',
      'GET /v2/widgets/w-404 1',
    ]);
    // The migration guide's: the document version 1's is derived from, and version 2's, both at version 2's path.
    expect(new Set(others)).toEqual(new Set(['GET /v2/openapi.json -']));
  });
});
