import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode as RpcErrorCode,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ServiceError, toServiceError } from '../core/errors.js';
import type { ProgressEvent } from '../core/operation.js';
import type { BrowserService } from '../core/service.js';
import { invalidArgument, toJsonSchema } from '../core/validation.js';
import { VERSION } from '../version.js';
import { errorResult, toCallToolResult } from './result.js';
import { samplingFallback } from './sampling.js';
import { urlElicitation } from './elicitation.js';
import type { RemoteTools, ToolContext, ToolDefinition } from './tool.js';
import { tools as defaultTools } from './tools/index.js';

const INSTRUCTIONS =
  'Drive real browsers. Call session_start to get a sessionId, navigate to open pages, extract to read them (no arguments: the page as text with element refs), agent_execute for multi-step tasks, and session_end when done.';

export interface McpServerOptions {
  /** Scope of the sessions this connection may see. */
  owner: string;
  tools?: ToolDefinition[];
  /** Sends calls for sessions held by another server instance there (the HTTP door sets it when peers are configured). */
  remote?: RemoteTools;
  /** Fires when the server shuts down: running tool calls stop and answer a `browser_unavailable` error. */
  stopping?: AbortSignal;
}

/** One MCP server per client connection; tools come from mcp/tools and call the shared core. */
export function createMcpServer(service: BrowserService, options: McpServerOptions): Server {
  const server = new Server(
    { name: 'browser-session-mcp', title: 'Browser sessions', version: VERSION },
    { capabilities: { tools: {}, logging: {} }, instructions: INSTRUCTIONS },
  );
  const tools = options.tools ?? defaultTools;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listed: Tool[] = tools.map(describeTool);

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool)
      throw new McpError(RpcErrorCode.InvalidParams, `Unknown tool "${request.params.name}". Call tools/list for the available tools.`);
    const sent: Array<Promise<unknown>> = [];
    const args = request.params.arguments ?? {};
    const signal = options.stopping ? AbortSignal.any([extra.signal, options.stopping]) : extra.signal;
    const local = () =>
      callTool(tool, args, {
        service,
        owner: options.owner,
        signal,
        progress: progressSender(extra, request.params.arguments, sent),
        modelFallback: samplingFallback({ server, requestId: extra.requestId, signal: extra.signal }),
        askHuman: urlElicitation(server, extra.requestId),
      });
    const parsed = options.remote ? tool.input.safeParse(args) : undefined;
    const result = await ((parsed?.success &&
      options.remote?.({ tool: tool.name, args: parsed.data, headers: extra.requestInfo?.headers, signal, local })) ||
      local());
    // Notifications are written asynchronously; a last one still in flight would reach the client after the result and be dropped.
    await Promise.all(sent);
    return result;
  });
  return server;
}

async function callTool(tool: ToolDefinition, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) return errorResult(invalidArgument(parsed.error, `arguments for ${tool.name}`));
  try {
    return toCallToolResult(await tool.run(parsed.data, ctx));
  } catch (err) {
    const cancelled = toServiceError(err);
    // Stopped by the shutdown rather than by the client: say so, so the client knows to retry elsewhere.
    const error = cancelled.code === 'cancelled' && ctx.signal.reason instanceof ServiceError ? ctx.signal.reason : cancelled;
    if (error.code === 'internal') ctx.service.logger.error({ err, tool: tool.name }, 'tool failed');
    return errorResult(error);
  }
}

function describeTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toJsonSchema(tool.input, 'input') as Tool['inputSchema'],
    outputSchema: toJsonSchema(tool.output, 'output') as Tool['outputSchema'],
    annotations: { title: tool.title, ...tool.annotations },
  };
}

/** Progress goes out as notifications/progress when the client sent a progressToken, else as log messages when it asked for streaming. */
function progressSender(
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  args: Record<string, unknown> | undefined,
  sent: Array<Promise<unknown>>,
): ((event: ProgressEvent) => void) | undefined {
  const token = extra._meta?.progressToken;
  if (token !== undefined) {
    let step = 0;
    return (event) => {
      sent.push(
        extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: ++step, message: event.message },
          })
          .catch(() => undefined),
      );
    };
  }
  if (args?.streamResponse === true) {
    return (event) => {
      sent.push(
        extra
          .sendNotification({
            method: 'notifications/message',
            params: { level: 'info', logger: 'browser-session-mcp', data: { message: event.message, ...event.data } },
          })
          .catch(() => undefined),
      );
    };
  }
  return undefined;
}
