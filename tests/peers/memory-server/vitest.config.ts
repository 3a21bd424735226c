// Runs the vendored tests unchanged: their `import … from '../index.js'`
// (the memory server's module) resolves to shim/index.ts, a
// KnowledgeGraphManager whose methods are MCP tool calls to the server
// under test (shim/target.ts). Tests listed in not-runnable.txt are left out
// by name; file-path.test.ts and resource.test.ts are not run (README.md).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = path.dirname(fileURLToPath(import.meta.url));

const notRunnable = readFileSync(path.join(here, 'not-runnable.txt'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export default defineConfig({
  resolve: {
    alias: [{ find: /^\.\.\/index\.js$/, replacement: path.join(here, 'shim', 'index.ts') }],
  },
  test: {
    root: here,
    include: ['upstream/src/memory/__tests__/knowledge-graph.test.ts'],
    // The upstream config's (src/memory/vitest.config.ts).
    globals: true,
    environment: 'node',
    setupFiles: ['shim/setup.ts'],
    globalSetup: ['shim/global-setup.ts'],
    testNamePattern: notRunnable.length
      ? new RegExp(`^(?!.*(?:${notRunnable.map(escape).join('|')})$)`)
      : undefined,
    // Each manager starts a server process; the first of ours may wait for
    // the embedded cluster.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
