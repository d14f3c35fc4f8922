// A program of its own, which startEmbeddedServer (../embedded.ts) starts as a file:
//   node initialize.js <data directory> <postgresql.conf lines as JSON>
// creates the embedded store's data directory and exits. initdb grows PGlite's WebAssembly memory to about 650 MB,
// which a process never gives back: the serving process only ever opens a directory this one created. It imports
// packages only, so Node runs it from its TypeScript source as well (the tests).
import { PGlite } from '@electric-sql/pglite';

const [dataDir, settings] = process.argv.slice(2);
if (dataDir === undefined || settings === undefined)
  throw new Error('usage: initialize.js <data directory> <postgresql.conf lines as JSON>');
const postgresqlconf = JSON.parse(settings) as string[];

const db = await PGlite.create({ dataDir, postgresqlconf });
await db.close();
