import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Integrations } from '../src/core/agent/integrations.js';

/** An MCP server that speaks only the old HTTP+SSE transport (GET /sse, POST /messages); it records every request's headers. */
async function startSseOnlyServer(): Promise<{
  url: string;
  requests: Array<{ method: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}> {
  const requests: Array<{ method: string; headers: IncomingHttpHeaders }> = [];
  const transports = new Map<string, SSEServerTransport>();
  const http: Server = createServer(async (req, res) => {
    requests.push({ method: req.method ?? '', headers: req.headers });
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      const server = new McpServer({ name: 'legacy', version: '1.0.0' });
      server.registerTool('ping_legacy', { description: 'Answers pong.' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
      await server.connect(transport);
      return;
    }
    const transport = transports.get(url.searchParams.get('sessionId') ?? '');
    if (req.method === 'POST' && transport) return transport.handlePostMessage(req, res);
    // Streamable HTTP attempts are refused, so the client falls back to SSE.
    res.writeHead(405).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/sse`,
    requests,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('MCP integration over the SSE fallback', () => {
  let server: Awaited<ReturnType<typeof startSseOnlyServer>>;

  beforeAll(async () => {
    server = await startSseOnlyServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('sends each integration header once on the event stream and on every message', async () => {
    const integrations = await Integrations.connect([{ url: server.url, headers: { 'X-Int': '1' } }], new Set());
    try {
      expect(integrations.specs.map((spec) => spec.name).join(' ')).toMatch(/ping_legacy/);
      const sse = server.requests.filter((request) => request.method === 'GET');
      const messages = server.requests.filter((request) => request.method === 'POST' && request.headers['mcp-session-id'] === undefined);
      expect(sse.length).toBeGreaterThan(0);
      for (const request of [...sse, ...messages]) expect(request.headers['x-int']).toBe('1');
    } finally {
      await integrations.close();
    }
  });
});
