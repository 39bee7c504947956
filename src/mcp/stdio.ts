import { serveStdio as serveModernStdio } from '@modelcontextprotocol/server/stdio';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_ACT_INPUT_BYTES } from '../core/act/index.js';
import type { BrowserService } from '../core/service.js';
import { LOCAL_OWNER } from '../door.js';
import { ModernMcp } from './modern.js';
import { TaskBook } from './tasks.js';
import { createMcpServer } from './server.js';
import { LineStdioServerTransport } from './stdio-transport.js';

/**
 * Serves MCP on stdin/stdout; `onClose` runs when the client closes stdin. The client's first message picks the
 * revision for the connection: one that carries the 2026-07-28 `_meta` envelope (server/discover, or any request of
 * that revision) is served by the SDK 2.x server, anything else (`initialize`) by the 2025-11-25 server.
 */
export async function serveStdio(service: BrowserService, options: { onClose: () => void }): Promise<void> {
  // Room for act's largest upload; a larger message is answered with an error and the connection stays open.
  const transport = new LineStdioServerTransport(process.stdin, process.stdout, MAX_ACT_INPUT_BYTES + 64 * 1024);
  process.stdin.on('end', options.onClose);
  process.stdin.on('close', options.onClose);
  const first = await new Promise<JSONRPCMessage>((resolve) => {
    transport.onmessage = resolve;
    void transport.start();
  });
  const replay = new ReplayTransport(transport, first);
  const tasks = new TaskBook();
  if (isModern(first)) {
    const modern = new ModernMcp(service);
    serveModernStdio(() => modern.server({ owner: LOCAL_OWNER, tasks }), {
      transport: replay as never,
      legacy: 'reject',
      onerror: (err) => service.logger.debug({ err }, 'MCP stdio error'),
    });
    service.logger.info('MCP server ready on stdio (2026-07-28)');
    return;
  }
  const server = createMcpServer(service, { owner: LOCAL_OWNER, tasks });
  server.onclose = options.onClose;
  await server.connect(replay);
  service.logger.info('MCP server ready on stdio');
}

function isModern(message: JSONRPCMessage): boolean {
  const meta = 'params' in message ? (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta : undefined;
  return typeof meta?.[PROTOCOL_VERSION_META_KEY] === 'string';
}

/** A started transport handed to the server its first message chose, with that message delivered first. */
class ReplayTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(
    private readonly inner: LineStdioServerTransport,
    private readonly first: JSONRPCMessage,
  ) {}

  async start(): Promise<void> {
    this.inner.onmessage = (message) => this.onmessage?.(message);
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    // After the server has finished connecting, which goes on after start() returns.
    setImmediate(() => this.onmessage?.(this.first));
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
