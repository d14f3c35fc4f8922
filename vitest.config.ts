import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['platform/**/*.test.ts', 'services/**/*.test.ts', 'gateway/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'test/containers/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
