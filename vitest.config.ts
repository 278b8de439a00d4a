import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores, i.e. one on the 2-core CI machine; most
    // files wait on child processes, sockets and timers, so two run side by side in 60 % of the time.
    maxWorkers: 2,
  },
});
