import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: [
      'libs/*/src/**/*.test.ts',
      'libs/*/test/**/*.test.ts',
      'services/*/src/**/*.test.ts',
      'services/*/test/**/*.test.ts',
      'tests/**/*.test.ts',
      'bench/src/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**'],
    globalSetup: ['libs/testing/src/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // Files share their worker's module cache: a fresh process per file spent ~4 s importing the
    // services under load (a third of the run). Each file still gets its own schema, streams and
    // service instances (useTestEnv, useStack), and no test mocks a module.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
})
