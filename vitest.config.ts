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
          exclude: ["node_modules/**", ".next/**"],
          environment: "node",
          setupFiles: ["test/integration-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Tests share one Postgres database and one RabbitMQ: run files one after another.
          fileParallelism: false,
        },
      },
    ],
  },
});
