// Where things are, for every script, test and benchmark that starts the built processes or reads repository
// files. The Dockerfile's CMD lines name the same entry points and node flags (checked in test/static).
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** The built entry points, relative to repoRoot (`npm run build` writes them). */
export const entries = Object.freeze({
  backend: 'services/users-orders/dist/src/main.js',
  gateway: 'gateway/dist/src/main.js',
});

/**
 * The built migration commands (each process's src/migrate.ts), relative to repoRoot and to the images' working
 * directory: what the Kubernetes migration Job runs, and what a process's `migrateCommand`
 * (platform/src/postgres/schema.ts) names.
 */
export const migrationEntries = Object.freeze({
  backend: 'services/users-orders/dist/src/migrate.js',
  gateway: 'gateway/dist/src/migrate.js',
});

/**
 * The node flags each built process runs with, wherever it ships: the Dockerfile's CMD lines, `npm start` and
 * the benchmarks. The backend's young generation is capped at 4 MiB: while `GET /api/users` streams a million
 * users from PostgreSQL, the network buffers it reads are then collected every few batches instead of piling
 * up to V8's 64 MiB limit for memory outside its heap (bench/README.md, "Users in PostgreSQL", with the
 * measured cost on the other routes).
 */
export const nodeFlags = Object.freeze({
  backend: Object.freeze(['--max-semi-space-size=4']),
  gateway: Object.freeze([]),
});
