// `npm run test:image`: builds the OCI image and runs it (image.test.ts).
// Apart from the default suite: it needs root, buildah, podman, runc and
// debootstrap, and a few minutes on a clean machine.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/image/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 900_000,
  },
});
