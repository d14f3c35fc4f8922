// Where things are, for every script, test and benchmark that starts the built processes or reads repository
// files. The Dockerfile's CMD lines name the same entry points (checked in test/static).
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** The built entry points, relative to repoRoot (`npm run build` writes them). */
export const entries = Object.freeze({
  backend: 'dist/services/users-orders/src/main.js',
  gateway: 'dist/gateway/src/main.js',
});
