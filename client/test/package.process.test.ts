import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/paths.mjs';
import { startLiveGateway, type LiveGateway } from './live-gateway.js';
import { startTamperingProxy } from './tampering-proxy.js';

/**
 * The package as a consumer gets it: `npm pack`, installed offline into an empty project (it has no dependencies to
 * fetch), imported and run from there, and its types read by a TypeScript consumer. Child processes run
 * asynchronously: the gateway they talk to answers from this process.
 */
const run = promisify(execFile);
const clientDir = join(repoRoot, 'client');
const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');

let live: LiveGateway;
let project: string;
beforeAll(async () => {
  // The tarball holds dist/: build it from the sources under test (a no-op when it is up to date).
  await run(process.execPath, [tsc, '-b', join(clientDir, 'tsconfig.build.json')]);
  live = await startLiveGateway();
  project = await mkdtemp(join(tmpdir(), 'version-router-client-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', project], { cwd: clientDir });
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', join(project, filename)], { cwd: project });
}, 120_000);
afterAll(async () => {
  await live?.close();
  if (project !== undefined) await rm(project, { recursive: true, force: true });
});

/** Every file under a directory, relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

describe('npm pack of @version-router/client', () => {
  it('holds its built files, README, LICENSE and package.json, nothing else', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], { cwd: clientDir });
    const [{ files }] = JSON.parse(stdout) as [{ files: { path: string }[] }];
    const built = (await filesUnder(join(clientDir, 'dist')))
      .filter((file) => /\.(js|d\.ts)$/.test(file))
      .map((file) => `dist/${file}`);
    expect(built).toEqual(
      expect.arrayContaining([
        'dist/index.js',
        'dist/index.d.ts',
        'dist/undici.js',
        'dist/undici.d.ts',
        'dist/check/cli.js',
      ]),
    );
    expect(files.map((file) => file.path).sort()).toEqual(['LICENSE', 'README.md', 'package.json', ...built].sort());
  });

  it('installs offline with nothing but itself, and reports a deprecation from the installed copy', async () => {
    const { stdout: tree } = await run('npm', ['ls', '--all', '--parseable'], { cwd: project });
    expect(
      tree
        .trim()
        .split('\n')
        .map((path) => relative(project, path)),
    ).toEqual(['', 'node_modules/@version-router/client']);
    const script = `
      import { createFetch } from '@version-router/client';
      const reports = [];
      const api = createFetch({ apiKey: process.env.API_KEY, onDeprecation: (report) => reports.push(report) });
      for (const id of [1, 2, 3]) await (await api(process.env.GATEWAY + '/v1/orders/ord-' + id)).arrayBuffer();
      while (reports.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      console.log(JSON.stringify(reports));
    `;
    await writeFile(join(project, 'use.mjs'), script);
    const { stdout } = await run(process.execPath, ['use.mjs'], {
      cwd: project,
      env: { ...process.env, API_KEY: live.key, GATEWAY: live.url },
    });
    expect(JSON.parse(stdout)).toEqual([
      {
        method: 'GET',
        url: `${live.url}/v1/orders/ord-1`,
        operation: 'GET /v1/orders/{id}',
        version: 1,
        sunset: '2027-01-01T00:00:00.000Z',
        successor: `${live.url}/v2/orders/ord-1`,
        changes: `${live.url}/versions/1/changes`,
        removed: false,
      },
    ]);
  });

  it('installs the version-router-check bin, whose exit status a CI job reads', async () => {
    const bin = join(project, 'node_modules/.bin/version-router-check');
    const check = async (args: string[], apiKey: string): Promise<{ code: number; stdout: string; stderr: string }> => {
      // The gateway's clock stands at the tests' today; this process's own clock is the machine's.
      try {
        const { stdout, stderr } = await run(bin, args, { env: { ...process.env, API_KEY: apiKey } });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
        return { code, stdout, stderr };
      }
    };
    await (await fetch(`${live.url}/v1/orders/ord-1`, { headers: { 'api-key': live.key } })).arrayBuffer();
    await live.gateway.app.consumers.ledger.flush();
    const due = await check(['--url', live.url, '--days', '3650'], live.key);
    expect(due.code).toBe(1);
    expect(due.stdout).toMatch(
      /^FAIL GET \/v1\/orders\/\{id\} \(v1, \d+ requests?\): sunsets 2027-01-01T00:00:00\.000Z/m,
    );
    const refused = await check(['--url', live.url], 'vr_nonsense');
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr: 'version-router-check: the gateway refused the key in API_KEY (401 invalid API key)\n',
    });
    // A report cut off on its way: exit 2 and one line from the installed bin, no stack trace.
    const proxy = await startTamperingProxy(live.url);
    try {
      proxy.tamper.set('/deprecations', { reset: true });
      expect(await check(['--url', proxy.url], live.key)).toEqual({
        code: 2,
        stdout: '',
        stderr: `version-router-check: GET ${proxy.url}/deprecations answered 200, but the body broke off (ECONNRESET)\n`,
      });
      proxy.tamper.set('/deprecations', { body: '{"consumer":"acme","versions":[{"version":1}]}' });
      expect(await check(['--url', proxy.url], live.key)).toEqual({
        code: 2,
        stdout: '',
        stderr: `version-router-check: GET ${proxy.url}/deprecations answered JSON that is not a deprecation report\n`,
      });
    } finally {
      await proxy.close();
    }
    const help = await check(['--help'], '');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: version-router-check --url <gateway>/);
  });

  it(
    "types resolve for a TypeScript consumer with moduleResolution nodenext, the interceptor's from " + 'undici',
    async () => {
      // The interceptor's types name undici's; the consumer brings undici (here the repository's copy).
      await symlink(join(repoRoot, 'node_modules/undici'), join(project, 'node_modules/undici'), 'dir');
      const consumer =
        `
      import { createFetch, type DeprecationReport, type VersionRouterFetch } from '@version-router/client';
      import { deprecationInterceptor } from '@version-router/client/undici';
      import { Agent } from 'undici';

      const api: VersionRouterFetch = createFetch({ apiKey: 'k', apiVersion: 2, onDeprecation: (report: ` +
        `DeprecationReport) => {
        const sunset: Date | null = report.sunset;
        const version: number | null = report.version;
        void [sunset, version];
      } });
      void api;
      // @ts-expect-error: a report's version is a number or null, never a string
      createFetch({ onDeprecation: (report) => { const wrong: string = report.version; void wrong; } });
      const agent = new Agent().compose(deprecationInterceptor());
      void agent;
    `;
      await writeFile(join(project, 'consumer.ts'), consumer);
      const tsconfig = {
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(repoRoot, 'node_modules/@types')],
        },
        files: ['consumer.ts'],
      };
      await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
      const { stdout } = await run(process.execPath, [tsc, '-p', project]).catch((err: { stdout: string }) => ({
        stdout: err.stdout,
      }));
      expect(stdout).toBe('');
    },
    120_000,
  );
});
