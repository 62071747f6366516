/**
 * Typed client generation (offline): `npx graphql-codegen --config codegen.ts` reads the
 * committed SDL and the operation documents, and writes typed clients (client preset:
 * TypedDocumentNode per operation), both gitignored:
 * - examples/generated/ from schema/operations (the examples' operations);
 * - console/src/generated/ from console/operations (the Weft Console's; scripts/console-build.mjs
 *   runs this before bundling the console).
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const scalars = { JSON: 'unknown', DateTime: 'string' };

const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  ignoreNoDocuments: false,
  generates: {
    'examples/generated/': {
      documents: ['schema/operations/*.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { importExtension: '.js', useTypeImports: true, enumsAsTypes: true, scalars },
    },
    'console/src/generated/': {
      documents: ['console/operations/*.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { useTypeImports: true, enumsAsTypes: true, scalars },
    },
  },
};

export default config;
