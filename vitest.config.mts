import { defineConfig } from "vitest/config";
import path from "node:path";

const alias = {
  "@": path.resolve(import.meta.dirname),
  // `server-only` throws outside React's server bundle; under vitest every module is server code.
  "server-only": path.resolve(import.meta.dirname, "test/server-only-stub.ts"),
};

/** Integration tests that disturb shared brokers: run alone, one file at a time. */
const faults = ["lib/redrive/faults.integration.test.ts", "lib/brokers/rabbitmq/outage.integration.test.ts"];

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: "unit",
          include: ["lib/**/*.test.ts", "components/**/*.test.ts", "scripts/**/*.test.ts"],
          exclude: ["**/*.integration.test.ts", "node_modules/**"],
          environment: "node",
          // A timeout only catches a hang: no unit test is a timing goal (bench/ holds those), and the
          // larger property tests must pass on a loaded 2-core machine too.
          testTimeout: 30_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "integration",
          include: ["**/*.integration.test.ts"],
          // Tests that stop what every other test uses (SIGKILLed workers, rabbitmqctl stop_app)
          // run on their own, after these: the faults project below.
          exclude: ["node_modules/**", ".next/**", ...faults],
          environment: "node",
          setupFiles: ["test/integration-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Files run in parallel (scripts/test.sh: --maxWorkers, one database per worker cloned
          // from a migrated template, see test/integration-setup.ts); every test names its own
          // queues, topics and users.
        },
      },
      {
        resolve: { alias },
        test: {
          name: "faults",
          include: faults,
          environment: "node",
          setupFiles: ["test/integration-setup.ts"],
          testTimeout: 600_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
