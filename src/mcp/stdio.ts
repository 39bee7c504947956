import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { MAX_ACT_INPUT_BYTES } from '../core/act/index.js';
import type { BrowserService } from '../core/service.js';
import { LOCAL_OWNER } from '../door.js';
import { createMcpServer } from './server.js';

/** Serves MCP on stdin/stdout; `onClose` runs when the client closes stdin. */
export async function serveStdio(service: BrowserService, options: { onClose: () => void }): Promise<void> {
  const server = createMcpServer(service, { owner: LOCAL_OWNER });
  // The SDK closes the connection on a message over its buffer (10 MiB by default): room for act's largest upload.
  const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: MAX_ACT_INPUT_BYTES + 64 * 1024 });
  process.stdin.on('end', options.onClose);
  process.stdin.on('close', options.onClose);
  server.onclose = options.onClose;
  await server.connect(transport);
  service.logger.info('MCP server ready on stdio');
}
