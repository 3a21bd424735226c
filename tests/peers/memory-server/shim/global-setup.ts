// Before any test: the server under test starts and lists the memory
// server's nine tools (for ours this also creates and starts the embedded
// cluster, once, before the tests' servers share it).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { memoryFor, serverFor, target } from './target.js';

const TOOLS = [
  'add_observations', 'create_entities', 'create_relations', 'delete_entities',
  'delete_observations', 'delete_relations', 'open_nodes', 'read_graph', 'search_nodes',
];

export default async function setup(): Promise<void> {
  const server = serverFor(memoryFor(`global-setup-${target()}`));
  let stderr = '';
  const transport = new StdioClientTransport({ ...server, stderr: 'pipe' });
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    server.log(chunk);
  });
  const client = new Client({ name: 'memory-server-peer-tests', version: '1.0.0' });
  try {
    await client.connect(transport);
    const names = (await client.listTools()).tools.map((t) => t.name);
    const missing = TOOLS.filter((t) => !names.includes(t));
    if (missing.length > 0) throw new Error(`the server lists no ${missing.join(', ')} (it lists ${names.join(', ')})`);
  } catch (error) {
    throw new Error(`${target()}: ${server.command} ${server.args.join(' ')} did not start: ${error}\n${stderr}`);
  } finally {
    await client.close();
  }
}
