import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { beforeEach } from 'vitest';
import { z } from 'zod';
import type { AgentConfig } from '../src/core/agent/schema.js';
import type { Provider, ReceivedRequest } from './fixtures/fake-llm.js';
import { useModelSite, type ModelSite } from './fixtures/model-site.js';

/** What every agent suite drives: the site and model servers, a library instance and a fresh session per test. */
export interface AgentHarness extends ModelSite {
  /** An AgentConfig for `provider` pointed at the fake model server. */
  config(extra?: Partial<AgentConfig>, options?: Record<string, unknown>): AgentConfig;
}

/** Registers the shared hooks inside a describe block; `prepare` runs after each test's session is started. */
export function useAgentHarness(provider: Provider, prepare: (h: AgentHarness) => Promise<unknown> = async () => undefined): AgentHarness {
  const fixture = useModelSite({ sessionPerTest: true });
  const h: AgentHarness = Object.assign(fixture, {
    config: (extra = {}, options = {}) => ({
      provider,
      model: provider === 'openai' ? 'gpt-test-model' : 'claude-test-model',
      options: {
        apiKey: 'test-key',
        baseURL: provider === 'openai' ? fixture.llm.openaiBaseURL : fixture.llm.anthropicBaseURL,
        maxRetries: 0,
        ...options,
      },
      ...extra,
    }),
  });
  beforeEach(async () => {
    await prepare(h);
  });
  return h;
}

/** A small MCP server (streamable HTTP, stateful) with an order lookup tool; it records sessions and headers. */
export interface OrdersServer {
  url: string;
  opened: string[];
  closed: string[];
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startOrdersServer(): Promise<OrdersServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const state: Omit<OrdersServer, 'url' | 'close'> = { opened: [], closed: [], headers: [] };
  const http: Server = createServer(async (req, res) => {
    state.headers.push(req.headers);
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId) return void res.writeHead(404).end();
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, created);
          state.opened.push(id);
        },
        onsessionclosed: (id) => {
          transports.delete(id);
          state.closed.push(id);
        },
      });
      const server = new McpServer({ name: 'orders', version: '1.0.0' });
      server.registerTool(
        'lookup_order',
        { description: 'Look up the shipping status of an order by its id.', inputSchema: { orderId: z.string() } },
        async ({ orderId }) => ({ content: [{ type: 'text', text: `Order ${orderId} shipped on 2024-03-02 via ParcelPost.` }] }),
      );
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  return {
    url,
    ...state,
    close: async () => {
      await Promise.all([...transports.values()].map((transport) => transport.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Every text the model was sent in one request, in order (system, user, tool results), for both wire formats. */
export function requestTexts(request: ReceivedRequest): string[] {
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      const part = value as Record<string, unknown>;
      if (typeof part.text === 'string') texts.push(part.text);
      else if (part.content !== undefined) walk(part.content);
    }
  };
  walk(request.body.system);
  for (const message of request.body.messages) walk(message.content);
  return texts;
}

/** The newest page state the model was shown. */
export function latestPage(request: ReceivedRequest): string {
  const states = requestTexts(request).filter((text) => text.startsWith('Page state (step') && text.includes('\nPage text:'));
  return states.at(-1) ?? '';
}

/**
 * The ref of the first element of the newest page text whose line matches `pattern`: `[0-12] textbox: Name` or a link
 * `[Text](0-41)`, read as docs/pagetext.md says: a `\[12]` or `]\(12)` with a backslash is the page's text, not a ref.
 */
export function refOf(request: ReceivedRequest, pattern: RegExp): string {
  const page = latestPage(request);
  for (const line of page.split('\n')) {
    if (!pattern.test(line)) continue;
    const link = /\[([^\]]*)\]\((\d+(?:-\d+)?)\)/g;
    for (const match of line.matchAll(link)) if (pattern.test(match[1]!)) return match[2]!;
    const element = /(?<!\\)\[(\d+(?:-\d+)?)\]/.exec(line);
    if (element) return element[1]!;
  }
  throw new Error(`no element matching ${pattern} in the page text:\n${page}`);
}

/** The tool results of the latest turn the model was sent (after its last assistant message), for both wire formats. */
export function lastToolResults(request: ReceivedRequest): string[] {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.map((message) => message.role).lastIndexOf('assistant');
  return messages.slice(last + 1).flatMap((message) => {
    if (message.role === 'tool') return [String(message.content)];
    if (!Array.isArray(message.content)) return [];
    return (message.content as Array<{ type: string; content?: unknown }>)
      .filter((part) => part.type === 'tool_result')
      .map((part) => (typeof part.content === 'string' ? part.content : JSON.stringify(part.content)));
  });
}

/** Number of images in one request, for both wire formats. */
export function imageCount(request: ReceivedRequest): number {
  return (JSON.stringify(request.body.messages).match(/"type":"(image|image_url)"/g) ?? []).length;
}
