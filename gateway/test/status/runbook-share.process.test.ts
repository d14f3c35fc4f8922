/**
 * The runbook's terminal one-liner for the share of traffic on deprecated versions (docs/runbook.md, "3. Monitor"),
 * run as written on a real gateway's /metrics and GET /versions: curl is a shell function handing it the gateway's
 * answers, jq and awk are the machine's.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestGateway, designPolicyFile, TODAY, type TestGateway } from '../support/helpers.js';
import { startStubBackend, type StubBackend } from '../support/stub-backend.js';
import { describeWithTool } from '../../../platform/test/support/tools.js';

const runbook = readFileSync(new URL('../../../docs/runbook.md', import.meta.url), 'utf8');
const oneLiner = /```sh\n(deprecated=\$\(curl -s localhost:8080\/versions[^]*?)\n# /.exec(runbook)?.[1];

let stub: StubBackend | undefined;
let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.app.close();
  await stub?.close();
});

/** The one-liner's output with curl answering the gateway's GET /versions and /metrics as they are now. */
async function share(g: TestGateway): Promise<string> {
  const versions = (await g.app.inject({ url: '/versions' })).body;
  const metrics = await g.registry.metrics();
  const curl =
    'curl() { case "$*" in *8080/versions*) printf "%s" "$VERSIONS";; *9464/metrics*) printf "%s" "$METRICS";; esac; }';
  const run = spawnSync('bash', ['--norc', '--noprofile', '-c', `${curl}\n${oneLiner}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, VERSIONS: versions, METRICS: metrics },
  });
  expect(run.stderr).toBe('');
  return run.stdout;
}

describe("the runbook's deprecated-share one-liner", () => {
  it('is in the runbook', () => {
    expect(oneLiner).toBeDefined();
  });

  describeWithTool('jq', 'run as written, with jq', () => {
    it('counts every request of a version deprecated now, also those served before its announcement', async () => {
      stub = await startStubBackend();
      const announced = Date.parse(designPolicyFile.versions[0]!.announced!);
      gateway = await buildTestGateway(stub.url, { now: announced - 86_400_000 });
      for (let i = 0; i < 3; i++) expect((await gateway.app.inject({ url: '/v1/orders/ord-1' })).statusCode).toBe(200);
      expect(await share(gateway)).toBe(
        '0.0 % of 3 versioned requests on versions deprecated now (none); 0 named no version and got the default\n',
      );
      gateway.setNow(TODAY);
      await gateway.app.inject({ url: '/orders/ord-1' });
      // All traffic so far was v1, which is deprecated now.
      expect(await share(gateway)).toBe(
        '100.0 % of 4 versioned requests on versions deprecated now (1); 1 named no version and got the default\n',
      );
      for (let i = 0; i < 4; i++) await gateway.app.inject({ url: '/v2/orders/ord-1' });
      expect(await share(gateway)).toBe(
        '50.0 % of 8 versioned requests on versions deprecated now (1); 1 named no version and got the default\n',
      );
    });

    it("counts a consumer's request that names no version and gets its pin as v1, never as the default's", async () => {
      stub = await startStubBackend();
      gateway = await buildTestGateway(stub.url, { now: TODAY });
      const admin = await gateway.admin();
      const created = await admin.inject({ method: 'POST', url: '/consumers', payload: { name: 'Acme', version: 1 } });
      expect(created.statusCode).toBe(201);
      const { key } = (await admin.inject({ method: 'POST', url: '/consumers/acme/keys' })).json<{ key: string }>();
      const pinned = await gateway.app.inject({ url: '/orders/ord-1', headers: { 'api-key': key } });
      expect(pinned.headers['api-version']).toBe('1');
      await gateway.app.inject({ url: '/orders/ord-1' });
      expect(await share(gateway)).toBe(
        '100.0 % of 2 versioned requests on versions deprecated now (1); 1 named no version and got the default\n',
      );
    });
  });
});
