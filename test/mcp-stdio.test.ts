import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';

describe('MCP over stdio', () => {
  let server: StdioServer;
  beforeAll(async () => {
    server = await startStdioServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists the session tools with titles, annotations and input and output schemas', async () => {
    const { tools } = await server.client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['session_start', 'navigate', 'session_end', 'session_list']));
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description!.length, tool.name).toBeGreaterThan(40);
      expect(tool.annotations, tool.name).toBeDefined();
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    const navigate = tools.find((tool) => tool.name === 'navigate')!;
    expect(navigate.inputSchema.required).toEqual(expect.arrayContaining(['sessionId', 'url']));
  });

  it('session_start returns distinct unguessable ids', async () => {
    const a = await server.call('session_start');
    const b = await server.call('session_start');
    const idA = (a.structuredContent as { id: string }).id;
    const idB = (b.structuredContent as { id: string }).id;
    expect(idA).not.toBe(idB);
    // 160 random bits in base64url
    expect(idA).toMatch(/^[A-Za-z0-9_-]{27,}$/);
    await server.call('session_end', { sessionId: idA });
    await server.call('session_end', { sessionId: idB });
  });
});
