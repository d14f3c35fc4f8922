// A program of its own, which startEmbeddedServer (../embedded.ts) starts as a file with an IPC channel:
//   node serve.js <data directory> <Unix socket path> <postgresql.conf lines as JSON>
// serves the data directory on the socket, says `ready` over the channel once the socket listens, and stops when
// the channel closes: its parent asked it to, or is gone however it went. It imports packages only, so Node runs
// it from its TypeScript source as well (the tests).
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const [dataDir, socketPath, settings] = process.argv.slice(2);
if (dataDir === undefined || socketPath === undefined || settings === undefined)
  throw new Error('usage: serve.js <data directory> <Unix socket path> <postgresql.conf lines as JSON>');
const postgresqlconf = JSON.parse(settings) as string[];

const db = await PGlite.create({ dataDir, postgresqlconf });
const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 4 });
await server.start();
const disconnected = new Promise((resolve) => process.once('disconnect', resolve));
process.send?.('ready');
await disconnected;
await server.stop();
await db.close();
process.exit(0);
