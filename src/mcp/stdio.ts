import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_ACT_INPUT_BYTES } from '../core/act/index.js';
import type { BrowserService } from '../core/service.js';
import { LOCAL_OWNER } from '../door.js';
import { TaskBook } from './tasks.js';
import { claimsRevision, createMcpServer } from './server.js';
import { LineStdioServerTransport } from './stdio-transport.js';

/**
 * Serves MCP on stdin/stdout; `onClose` runs when the client closes stdin. The client's first message picks the
 * revision for the connection: one that carries the 2026-07-28 `_meta` envelope (server/discover, or any request of
 * that revision) is served by the SDK 2.x server, anything else (`initialize`) by the 2025-11-25 server.
 */
export async function serveStdio(service: BrowserService, options: { onClose: () => void }): Promise<void> {
  // Room for act's largest upload; a larger message is answered with an error and the connection stays open.
  const transport = new LineStdioServerTransport(process.stdin, process.stdout, MAX_ACT_INPUT_BYTES + 64 * 1024);
  // A client may write several messages at once: all that arrive before the server is connected are kept, in order.
  const early: JSONRPCMessage[] = [];
  const first = await new Promise<JSONRPCMessage>((resolve) => {
    transport.onmessage = (message) => {
      early.push(message);
      resolve(early[0]!);
    };
    void transport.start();
  });
  // The end of stdin closes the server once the messages before it have been handed over (a client may write its
  // requests and close at once); the same check as before for a client that already went.
  const replay = new ReplayTransport(transport, early, () => {
    if (process.stdin.readableEnded) return options.onClose();
    process.stdin.on('end', options.onClose);
    process.stdin.on('close', options.onClose);
  });
  const tasks = new TaskBook();
  if (claimsRevision(first)) {
    // Loaded only for such a client: a 2025-11-25 connection starts without the SDK 2.x.
    const [{ serveStdio: serveModernStdio }, { ModernMcp }] = await Promise.all([
      import('@modelcontextprotocol/server/stdio'),
      import('./modern.js'),
    ]);
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

/**
 * A started transport handed to the server its first message chose, with the messages kept meanwhile delivered first;
 * `replayed` runs once they have been.
 */
class ReplayTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(
    private readonly inner: LineStdioServerTransport,
    private readonly early: JSONRPCMessage[],
    private readonly replayed: () => void,
  ) {}

  async start(): Promise<void> {
    let replaying = true;
    this.inner.onmessage = (message) => (replaying ? this.early.push(message) : this.onmessage?.(message));
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    // After the server has finished connecting, which goes on after start() returns.
    setImmediate(() => {
      for (const message of this.early.splice(0)) this.onmessage?.(message);
      replaying = false;
      this.replayed();
    });
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
