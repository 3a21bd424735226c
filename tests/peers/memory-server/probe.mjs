// A hand check, not part of the suite: what a server answers, over the same
// MCP client, to what the issue is about (the knowledge-graph resource, and
// a relation from an entity to itself). Prints each request and its answer.
//
//   MEMORY_FILE_PATH=/tmp/x/memory.jsonl node probe.mjs node node_modules/@modelcontextprotocol/server-memory/dist/index.js
//   node probe.mjs /work/main/target/release/neotoma-mcp --tools memory --user-id <uuid> [--data-dir … --pg-port …]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node probe.mjs <server command> [arguments]');
  process.exit(2);
}
const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined));
const transport = new StdioClientTransport({ command, args, env, stderr: 'ignore' });
const client = new Client({ name: 'memory-server-probe', version: '1.0.0' });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) =>
  console.log(`--- notification ${n.method} ${JSON.stringify(n.params)}`));
await client.connect(transport);

const show = (what, answer) => console.log(`--- ${what}\n${JSON.stringify(answer, null, 2)}`);
async function attempt(what, f) {
  try {
    show(what, await f());
  } catch (error) {
    show(what, { thrown: { code: error.code, message: error.message } });
  }
}
const tool = (name, args) => attempt(`tools/call ${name} ${JSON.stringify(args)}`, () =>
  client.callTool({ name, arguments: args }));

show('server capabilities', client.getServerCapabilities());
await attempt('resources/list', () => client.listResources());
await attempt('resources/templates/list', () => client.listResourceTemplates());
await tool('create_entities', { entities: [
  { name: 'A', entityType: 'thing', observations: ['a'] },
  { name: 'B', entityType: 'thing', observations: [] },
] });
await tool('create_relations', { relations: [{ from: 'A', to: 'A', relationType: 'self' }] });
await tool('create_relations', { relations: [
  { from: 'A', to: 'B', relationType: 'knows' },
  { from: 'B', to: 'B', relationType: 'self' },
] });
await tool('read_graph', {});
await attempt('resources/read memory://knowledge-graph', () =>
  client.readResource({ uri: 'memory://knowledge-graph' }));
await attempt('resources/subscribe memory://knowledge-graph', () =>
  client.subscribeResource({ uri: 'memory://knowledge-graph' }));
await tool('delete_relations', { relations: [{ from: 'A', to: 'A', relationType: 'self' }] });
await tool('read_graph', {});
await attempt('resources/read memory://other', () => client.readResource({ uri: 'memory://other' }));
await new Promise((r) => setTimeout(r, 200));
await client.close();
