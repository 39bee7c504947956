import { MAX_ACT_INPUT_BYTES } from '../core/act/index.js';
import type { BrowserService } from '../core/service.js';
import { LOCAL_OWNER } from '../door.js';
import { createMcpServer } from './server.js';
import { LineStdioServerTransport } from './stdio-transport.js';

/** Serves MCP on stdin/stdout; `onClose` runs when the client closes stdin. */
export async function serveStdio(service: BrowserService, options: { onClose: () => void }): Promise<void> {
  const server = createMcpServer(service, { owner: LOCAL_OWNER });
  // Room for act's largest upload; a larger message is answered with an error and the connection stays open.
  const transport = new LineStdioServerTransport(process.stdin, process.stdout, MAX_ACT_INPUT_BYTES + 64 * 1024);
  process.stdin.on('end', options.onClose);
  process.stdin.on('close', options.onClose);
  server.onclose = options.onClose;
  await server.connect(transport);
  service.logger.info('MCP server ready on stdio');
}
