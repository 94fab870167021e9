import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["server/**/*.test.ts", "clients/ts/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "dist/**", "test/bench/**", "test/image/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
