import { defineConfig } from "vitest/config"

/**
 * Suites that disturb shared services (test/faults restarts the local PostgreSQL), so they run alone, after
 * `npm test`: `npm run test:faults`. Their files end in `.fault.ts`, which the default include never matches.
 */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.fault.ts"],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 1,
    minWorkers: 1
  }
})
