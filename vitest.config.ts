import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Vitest's default is one worker per core but one, which is a single worker on a 2-core host:
    // every file then waits for the one before it, though most of a Redis, process or browser
    // test's time is spent waiting, not computing. Two workers at least.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Each worker keeps its module graph from one file to the next instead of importing src/,
    // BullMQ, ioredis, XState and zod afresh for each of the 154 files. No test relies on a
    // fresh graph: no file mocks modules, and the files that change process.env or OpenTelemetry's
    // globals restore them when they finish.
    isolate: false,
  },
});
