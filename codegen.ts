/**
 * Typed client generation (offline): `npx graphql-codegen --config codegen.ts` reads the
 * committed SDL and the operation documents in schema/operations, and writes a typed client
 * (client preset: TypedDocumentNode per operation) to examples/generated/ (gitignored).
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['schema/operations/*.graphql'],
  ignoreNoDocuments: false,
  generates: {
    'examples/generated/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        importExtension: '.js',
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { JSON: 'unknown', DateTime: 'string' },
      },
    },
  },
};

export default config;
