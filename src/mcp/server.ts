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
import { z } from 'zod';
import { ServiceError, toServiceError } from '../core/errors.js';
import type { ProgressEvent } from '../core/operation.js';
import type { BrowserService } from '../core/service.js';
import { VERSION } from '../version.js';
import { samplingFallback } from './sampling.js';
import type { ToolContext, ToolDefinition } from './tool.js';
import { tools as defaultTools } from './tools/index.js';

const INSTRUCTIONS =
  'Drive real browsers. Call session_start to get a sessionId, navigate to open pages, extract to read them (no arguments: the page as text with element refs), agent_execute for multi-step tasks, and session_end when done.';

export interface McpServerOptions {
  /** Scope of the sessions this connection may see. */
  owner: string;
  tools?: ToolDefinition[];
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
    const result = await callTool(tool, request.params.arguments ?? {}, {
      service,
      owner: options.owner,
      signal: extra.signal,
      progress: progressSender(extra, request.params.arguments, sent),
      modelFallback: samplingFallback({ server, requestId: extra.requestId, signal: extra.signal }),
    });
    // Notifications are written asynchronously; a last one still in flight would reach the client after the result and be dropped.
    await Promise.all(sent);
    return result;
  });
  return server;
}

async function callTool(tool: ToolDefinition, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const parsed = tool.input.safeParse(args);
  if (!parsed.success)
    return errorResult(new ServiceError('invalid_argument', `Invalid arguments for ${tool.name}: ${formatIssues(parsed.error)}`));
  try {
    const output = await tool.run(parsed.data, ctx);
    const meta: Record<string, unknown> = { ...output.meta };
    if (output.pageEvents?.length) meta.pageEvents = output.pageEvents;
    const notes = output.pageEvents?.map((event) => `Note: ${event.message}${event.url ? ` (${event.url})` : ''}`) ?? [];
    return {
      content: [{ type: 'text', text: [output.text ?? JSON.stringify(output.structured), ...notes].join('\n') }],
      structuredContent: output.structured as Record<string, unknown>,
      ...(Object.keys(meta).length ? { _meta: meta } : {}),
    };
  } catch (err) {
    const error = toServiceError(err);
    if (error.code === 'internal') ctx.service.logger.error({ err, tool: tool.name }, 'tool failed');
    return errorResult(error);
  }
}

function errorResult(error: ServiceError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error [${error.code}]: ${error.message}` }], _meta: { error: error.toJSON() } };
}

export function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`).join('; ');
}

function describeTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input, 'input') as Tool['inputSchema'],
    outputSchema: jsonSchemaOf(tool.output, 'output') as Tool['outputSchema'],
    annotations: { title: tool.title, ...tool.annotations },
  };
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return json;
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
