#!/usr/bin/env node
// Bundles a service's src/main.ts, with our workspace libraries and their dependencies, into one
// dist/main.js (pnpm's strict node_modules would not let a service resolve its libraries'
// dependencies at run time). Only the generated Prisma client stays external: it is loaded
// through @mailer/db's `./prisma-client` export so its runtime and wasm files resolve where
// they were installed. Optional native add-ons are left out.
import { build } from 'esbuild'

const OPTIONAL_NATIVE = ['pg-native', 'cpu-features', 'ssh2', 'bufferutil', 'utf-8-validate']

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/main.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
  plugins: [
    {
      name: 'externals',
      setup(b) {
        b.onResolve({ filter: /generated\/client/ }, () => ({
          path: '@mailer/db/prisma-client',
          external: true,
        }))
        b.onResolve({ filter: new RegExp(`^(${OPTIONAL_NATIVE.join('|')})$`) }, (args) => ({
          path: args.path,
          external: true,
        }))
      },
    },
  ],
})
