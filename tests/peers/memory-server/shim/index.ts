// Stands in for the memory server's module (src/memory/index.ts upstream)
// when the vendored tests import '../index.js' (vitest.config.ts aliases it
// here). Its KnowledgeGraphManager has the original's methods and answers,
// but each method is one MCP tool call, over stdio, to the server under test
// (./target.ts): create_entities, create_relations, add_observations,
// delete_entities, delete_observations, delete_relations, read_graph,
// search_nodes, open_nodes. A tool's error result is thrown as an Error
// with the error's text, as the original method throws.
//
// The original manager is built on a file path: what it reads and writes.
// Here the path names a memory of the server's (target.ts: a fresh memory
// file in a temporary directory for the original server, a fresh user for
// neotoma-mcp): a second manager on the same path during a test sees the
// first one's memory, through a server process of its own. Each test
// starts with no memory named (setup.ts).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { memoryFor, serverFor } from './target.js';

// The original's types (upstream src/memory/index.ts).
export interface Entity {
  name: string;
  entityType: string;
  observations: string[];
}

export interface Relation {
  from: string;
  to: string;
  relationType: string;
}

export interface KnowledgeGraph {
  entities: Entity[];
  relations: Relation[];
}

// Every client a manager opened, closed after each test (setup.ts).
const open = new Set<Client>();

export async function closeAllClients(): Promise<void> {
  const clients = [...open];
  open.clear();
  await Promise.allSettled(clients.map((c) => c.close()));
}

export class KnowledgeGraphManager {
  private client: Promise<Client> | undefined;

  constructor(private memoryFilePath: string) {}

  private connect(): Promise<Client> {
    this.client ??= (async () => {
      const server = serverFor(memoryFor(this.memoryFilePath));
      const transport = new StdioClientTransport({ ...server, stderr: 'pipe' });
      transport.stderr?.on('data', (chunk: Buffer) => server.log(chunk));
      const client = new Client({ name: 'memory-server-peer-tests', version: '1.0.0' });
      await client.connect(transport);
      open.add(client);
      return client;
    })();
    return this.client;
  }

  // One tool call: its structured content (the text's JSON when there is
  // none), or the error's text thrown.
  private async call(name: string, args: Record<string, unknown>): Promise<any> {
    const client = await this.connect();
    const result = await client.callTool({ name, arguments: args });
    const text = (result.content as { type: string; text?: string }[] | undefined)
      ?.filter((c) => c.type === 'text')
      .map((c) => c.text)
      .join('\n');
    if (result.isError) {
      throw new Error(text ?? `${name} failed`);
    }
    if (result.structuredContent !== undefined) {
      return result.structuredContent;
    }
    return text === undefined ? undefined : JSON.parse(text);
  }

  async createEntities(entities: Entity[]): Promise<Entity[]> {
    return (await this.call('create_entities', { entities })).entities;
  }

  async createRelations(relations: Relation[]): Promise<Relation[]> {
    return (await this.call('create_relations', { relations })).relations;
  }

  async addObservations(
    observations: { entityName: string; contents: string[] }[],
  ): Promise<{ entityName: string; addedObservations: string[] }[]> {
    return (await this.call('add_observations', { observations })).results;
  }

  async deleteEntities(entityNames: string[]): Promise<void> {
    await this.call('delete_entities', { entityNames });
  }

  async deleteObservations(
    deletions: { entityName: string; observations: string[] }[],
  ): Promise<void> {
    await this.call('delete_observations', { deletions });
  }

  async deleteRelations(relations: Relation[]): Promise<void> {
    await this.call('delete_relations', { relations });
  }

  // One read_graph call, answered as the server answers it: neotoma-mcp
  // answers a page (100 entities) with nextCursor when more follow; the
  // shim does not follow it (no test stores more than 3 entities).
  async readGraph(): Promise<KnowledgeGraph> {
    return this.call('read_graph', {});
  }

  async searchNodes(query: string): Promise<KnowledgeGraph> {
    return this.call('search_nodes', { query });
  }

  async openNodes(names: string[]): Promise<KnowledgeGraph> {
    return this.call('open_nodes', { names });
  }
}
