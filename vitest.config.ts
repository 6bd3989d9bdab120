import { defineConfig } from "vitest/config";
import path from "node:path";

const alias = {
  "@": path.resolve(__dirname),
  // `server-only` throws outside React's server bundle; under vitest every module is server code.
  "server-only": path.resolve(__dirname, "test/server-only-stub.ts"),
};

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
        },
      },
      {
        resolve: { alias },
        test: {
          name: "integration",
          include: ["**/*.integration.test.ts"],
          // The redrive fault tests (SIGKILLed worker processes, two workers on one job) run on
          // their own: `npm run test:faults`. See README "Redrive" for why and their last figures.
          exclude: ["node_modules/**", ".next/**", "lib/redrive/faults.integration.test.ts"],
          environment: "node",
          setupFiles: ["test/integration-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Tests share one Postgres database and one RabbitMQ: run files one after another.
          fileParallelism: false,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "faults",
          include: ["lib/redrive/faults.integration.test.ts"],
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
