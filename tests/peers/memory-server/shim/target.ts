// The server under test, from the environment ./run sets:
//
//   MEMORY_PEER_TARGET  control: the original server from npm
//                       (node node_modules/@modelcontextprotocol/server-memory/dist/index.js),
//                       a memory being a MEMORY_FILE_PATH in the run's
//                       temporary directory;
//                       ours: `neotoma-mcp --tools memory`, a memory being a
//                       --user-id of its own (a fresh uuid)
//   MEMORY_PEER_TMP     the run's temporary directory (memory files, the
//                       embedded cluster's data directory, server logs)
//   NEOTOMA_MCP_BIN     ours: the gateway (default target/release/neotoma-mcp)
//   NEOTOMA_TEST_PG     ours: the DATABASE_URL run made (a database of its own); without it the embedded
//                       cluster in $MEMORY_PEER_TMP/neotoma on --pg-port
//                       MEMORY_PEER_PG_PORT (55502)

import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

export type Target = 'control' | 'ours';

export function target(): Target {
  const t = process.env.MEMORY_PEER_TARGET;
  if (t !== 'control' && t !== 'ours') {
    throw new Error('MEMORY_PEER_TARGET must be control or ours: run the suite with ./run --control or ./run --ours');
  }
  return t;
}

export function tmpDir(): string {
  const dir = process.env.MEMORY_PEER_TMP;
  if (!dir) throw new Error('MEMORY_PEER_TMP is not set: run the suite with ./run');
  return dir;
}

export function originalServer(): string {
  return path.join(root, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
}

export function gatewayBin(): string {
  return process.env.NEOTOMA_MCP_BIN || path.resolve(root, '..', '..', '..', 'target', 'release', 'neotoma-mcp');
}

// Where ours finds its database: a URL, or the embedded cluster's flags.
export function gatewayDb(): { args: string[]; env: Record<string, string> } {
  const url = process.env.NEOTOMA_TEST_PG;
  if (url) return { args: [], env: { DATABASE_URL: url } };
  return {
    args: ['--data-dir', path.join(tmpDir(), 'neotoma'), '--pg-port', process.env.MEMORY_PEER_PG_PORT || '55502'],
    env: {},
  };
}

// A memory of the server's: a file for the original, a user for ours.
export type Memory = { file: string } | { user: string };

let memories = new Map<string, Memory>();
let memoryCount = 0;

// The memory a manager built on `memoryFilePath` uses: the same for the same
// path until forgetMemories() (before each test), a fresh one otherwise.
export function memoryFor(memoryFilePath: string): Memory {
  let memory = memories.get(memoryFilePath);
  if (!memory) {
    memoryCount += 1;
    memory =
      target() === 'control'
        ? { file: path.join(tmpDir(), 'memory', `${process.pid}-${memoryCount}.jsonl`) }
        : { user: randomUUID() };
    memories.set(memoryFilePath, memory);
  }
  return memory;
}

export function forgetMemories(): void {
  memories = new Map();
}

// The environment a server starts with: this one's, without what would
// choose its memory or database behind the harness's back.
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (k.startsWith('NEOTOMA_') || k.startsWith('MEMORY_') || k === 'DATABASE_URL') continue;
    env[k] = v;
  }
  return env;
}

let serverCount = 0;

export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  log: (chunk: Buffer) => void;
}

// The command of a server on `memory`, and where its stderr goes
// ($MEMORY_PEER_TMP/logs/server-<pid>-<n>.log).
export function serverFor(memory: Memory): ServerCommand {
  serverCount += 1;
  const logs = path.join(tmpDir(), 'logs');
  mkdirSync(logs, { recursive: true });
  const logFile = path.join(logs, `server-${process.pid}-${serverCount}.log`);
  const log = (chunk: Buffer) => appendFileSync(logFile, chunk);
  if ('file' in memory) {
    mkdirSync(path.dirname(memory.file), { recursive: true });
    return {
      command: process.execPath,
      args: [originalServer()],
      env: { ...baseEnv(), MEMORY_FILE_PATH: memory.file },
      log,
    };
  }
  const db = gatewayDb();
  return {
    command: gatewayBin(),
    args: ['--tools', 'memory', '--user-id', memory.user, ...db.args],
    env: { ...baseEnv(), NEOTOMA_LOG: 'info', ...db.env },
    log,
  };
}
