// Loaded into a process under test (NODE_OPTIONS="--expose-gc --import <this file's URL>"): on SIGWINCH it runs a
// full garbage collection and logs the live heap as one JSON line on stdout, beside the process's own log lines.
// The live heap after a full collection is what a leak grows; RSS also follows V8's sizing of its spaces, which
// differs between Node majors (test/support/live-heap.ts).
process.on('SIGWINCH', () => {
  globalThis.gc();
  const { heapUsed } = process.memoryUsage();
  process.stdout.write(`${JSON.stringify({ msg: 'heap after full gc', heapUsed })}\n`);
});
