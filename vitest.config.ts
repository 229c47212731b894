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
    // Three files at once on a 2-core machine: most long files wait on the product's own timers
    // (leases, ack waits, retries, processes starting), so a third worker overlaps those waits.
    // On two workers the tests took ~775 s and `make test` ~14 minutes; on three ~575 s and ~11
    // minutes, the CPU ~80 % busy. Timing tests wait on gates and events rather than fixed
    // sleeps (the flake audits), so the extra load slows them without failing them.
    maxWorkers: 3,
    // Files share their worker's module cache: a fresh process per file spent ~4 s importing the
    // services under load (a third of the run). Each file still gets its own schema, streams and
    // service instances (useTestEnv, useStack), and no test mocks a module.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
})
