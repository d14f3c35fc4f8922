import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { lockDataDir } from './data-dir-lock.js';

/** The embedded PostgreSQL as a running server the store's pool connects to, and how to stop it. */
export interface EmbeddedServer {
  /** A postgres:// URL naming the server's Unix socket. */
  url: string;
  close(): Promise<void>;
}

/**
 * PGlite (PostgreSQL compiled to WebAssembly, in this process) with its data in `dataDir`, served on a Unix
 * socket in a new private directory (mode 0700: only this user can connect), so the store runs the same SQL
 * and migrations through the same pg Pool as on a PostgreSQL server. Loaded only here: it costs about 300 MB
 * of memory once opened (bench/README.md), which a gateway with DATABASE_URL never pays.
 */
export async function startEmbeddedServer(dataDir: string): Promise<EmbeddedServer> {
  const release = lockDataDir(dataDir);
  const socketDir = await mkdtemp(join(tmpdir(), 'gateway-store-'));
  const cleanUp = async (): Promise<void> => {
    await rm(socketDir, { recursive: true, force: true });
    release();
  };
  try {
    const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-socket')]);
    const db = await PGlite.create({ dataDir: resolve(dataDir) });
    // PGlite is one session: connections take turns, a transaction keeps its connection's turn until it ends.
    // The pool holds one and the migration runner one; the rest is room for a connection being replaced.
    const server = new PGLiteSocketServer({ db, path: join(socketDir, '.s.PGSQL.5432'), maxConnections: 4 });
    try {
      await server.start();
    } catch (err) {
      await db.close();
      throw err;
    }
    return {
      url: `postgres://postgres@localhost/postgres?host=${socketDir}`,
      async close() {
        await server.stop();
        await db.close();
        await cleanUp();
      },
    };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}
