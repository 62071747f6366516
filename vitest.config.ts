import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // graphql 16 ships CJS (`main`) and ESM (`module`) builds without an exports map: Node loads
  // the CJS one for the externalised dependencies (Pothos, yoga), Vite would pick the ESM one for
  // our sources, and two copies of graphql refuse each other's types. One copy: Node's.
  resolve: { alias: { graphql: require.resolve('graphql') } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
