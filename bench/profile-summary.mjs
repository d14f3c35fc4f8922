// Where a gateway's CPU goes, by layer, from a V8 CPU profile (node --cpu-prof).
//
//   node bench/profile-summary.mjs [--functions=N] <file.cpuprofile> [window-end-s] [window-length-s]
//
// Counts the profile's busy samples (not idle) in a window of the run, by default the whole profile, else the
// `window-length-s` seconds that end `window-end-s` seconds before the profile's end (e.g. `1 8`: the last
// 8-second load phase of bench/keys-cost.mjs, which stops the gateway about a second after its last phase).
// Each sample goes to the layer of the innermost frame that belongs to a package or to our code: a socket
// write that Fastify's reply makes counts as Fastify, one that undici makes as undici. Samples with only
// Node's own frames go to Node's HTTP server or its sockets and streams; V8's garbage collector and
// "(program)" (native code V8 cannot attribute) stand apart. With --functions=N it then lists the N functions
// with the most self time (the innermost frame of each sample, native builtins included), each with its layer:
// what to read when two profiles' layers differ.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const functionsFlag = args.find((arg) => arg.startsWith('--functions='));
const topFunctions = functionsFlag === undefined ? 0 : Number(functionsFlag.slice('--functions='.length));
const [file, endArg, lengthArg] = args.filter((arg) => arg !== functionsFlag);
if (file === undefined) {
  process.stderr.write(
    'usage: node bench/profile-summary.mjs [--functions=N] <file.cpuprofile> [window-end-s] [window-length-s]\n',
  );
  process.exit(2);
}

const PACKAGE_LAYERS = [
  [
    /node_modules\/(pino|@pinojs|sonic-boom|quick-format-unescaped|fast-redact|pino-std-serializers)\//,
    'logging (pino)',
  ],
  [/node_modules\/prom-client\//, 'metrics (prom-client)'],
  [/node_modules\/undici\//, 'backend client (undici)'],
  [/node_modules\/@fastify\/reply-from\//, 'proxying (@fastify/reply-from)'],
  [
    /node_modules\/(fastify|find-my-way|avvio|light-my-request|fast-json-stringify|@fastify\/[^/]+)\//,
    'framework (Fastify)',
  ],
  [/\/(gateway|platform)\/dist\//, 'gateway code (ours)'],
];
const NODE_LAYERS = [
  [/^node:_http_|^node:http/, "Node's HTTP server"],
  [/^node:net|stream_base|^node:stream|internal\/streams/, "Node's sockets and streams"],
];

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

const to = endArg === undefined ? profile.endTime : profile.endTime - Number(endArg) * 1e6;
const from = lengthArg === undefined ? profile.startTime : to - Number(lengthArg) * 1e6;

const layerOf = (sampleId) => {
  const leaf = nodes.get(sampleId).callFrame.functionName;
  if (leaf === '(garbage collector)') return 'garbage collection';
  if (leaf === '(program)') return 'V8 and native, unattributed';
  let nodeLayer;
  for (let id = sampleId; id !== undefined; id = parents.get(id)) {
    const { url } = nodes.get(id).callFrame;
    const layer = PACKAGE_LAYERS.find(([pattern]) => pattern.test(url));
    if (layer !== undefined) return layer[1];
    nodeLayer ??= NODE_LAYERS.find(([pattern]) => pattern.test(url))?.[1];
  }
  return nodeLayer ?? 'Node, other';
};

const counts = new Map();
const functionCounts = new Map();
/** A sample's innermost frame, named by function, file and line. */
const functionOf = (sampleId) => {
  const { functionName, url, lineNumber } = nodes.get(sampleId).callFrame;
  const where =
    url === ''
      ? ''
      : ` ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(gateway|platform)\/dist\//, '$1/')}:${lineNumber + 1}`;
  return `${functionName === '' ? '(anonymous)' : functionName}${where}`;
};
let busy = 0;
let time = profile.startTime;
profile.samples.forEach((sampleId, i) => {
  time += profile.timeDeltas[i];
  if (time < from || time > to || nodes.get(sampleId).callFrame.functionName === '(idle)') return;
  busy += 1;
  const layer = layerOf(sampleId);
  counts.set(layer, (counts.get(layer) ?? 0) + 1);
  if (topFunctions > 0) {
    const key = `${functionOf(sampleId)}  [${layer}]`;
    functionCounts.set(key, (functionCounts.get(key) ?? 0) + 1);
  }
});

process.stdout.write(
  `${busy} busy samples between ${((from - profile.startTime) / 1e6).toFixed(1)} s and ` +
    `${((to - profile.startTime) / 1e6).toFixed(1)} s\n`,
);
for (const [layer, count] of [...counts].sort((a, b) => b[1] - a[1])) {
  process.stdout.write(`${((count / busy) * 100).toFixed(1).padStart(5)} %  ${layer}\n`);
}
if (topFunctions > 0) {
  process.stdout.write(`self time, the ${topFunctions} largest functions:\n`);
  for (const [name, count] of [...functionCounts].sort((a, b) => b[1] - a[1]).slice(0, topFunctions)) {
    process.stdout.write(`${((count / busy) * 100).toFixed(1).padStart(5)} %  ${name}\n`);
  }
}
