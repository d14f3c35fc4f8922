import { defineConfig } from 'vitest/config';

// `npm run test:soak` only: a minute of load is too slow for `npm test`.
export default defineConfig({
  test: {
    include: ['test/soak/**/*.soak.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
