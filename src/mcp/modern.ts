import {
  CLIENT_CAPABILITIES_META_KEY,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ResourceNotFoundError,
  Server,
  inputRequired,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ServiceError, toServiceError } from '../core/errors.js';
import type { BrowserService } from '../core/service.js';
import { VERSION } from '../version.js';
import { urlElicitation, type ElicitationChannel } from './elicitation.js';
import { listAppResources, readAppResource } from './app.js';
import { errorResult } from './result.js';
import { Round, Rounds, type InputAsk } from './rounds.js';
import { TASK_TOOLS, TASK_TTL_MS, type TaskBook, type TaskEntry } from './tasks.js';
import { SAMPLING_TIMEOUT_MS, samplingFallback, type SamplingCall, type SamplingResult } from './sampling.js';
import {
  INSTRUCTIONS,
  callTool,
  listedTools,
  progressSender,
  toolsByName,
  untilStopped,
  type McpServerOptions,
  type Notify,
  type ToolCall,
} from './server.js';

/** The Tasks extension (SEP-2663), which a client names in its per-request capabilities. */
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The MCP revisions served by the 2.x SDK's per-request server (stateless HTTP, and stdio opened with server/discover). */
export const MODERN_REVISIONS = ['2026-07-28'];

type LegacyResult = Awaited<ReturnType<typeof callTool>>;
type ToolRounds = Rounds<LegacyResult>;

/**
 * The MCP 2026-07-28 side of one door (the HTTP endpoint, or a stdio connection): a fresh SDK 2.x server per request
 * (HTTP) or per connection (stdio), and the rounds of the calls waiting on their client, which outlive both.
 */
export class ModernMcp {
  private readonly rounds: ToolRounds = new Rounds();

  constructor(private readonly service: BrowserService) {}

  /** The server for a request (or connection) of `options.owner`. */
  server(options: McpServerOptions): Server {
    return createModernMcpServer(this.service, this.rounds, options);
  }

  close(): void {
    this.rounds.close();
  }
}

/**
 * The tools for an MCP 2026-07-28 client: the same operation table and tool calls as the 2025-11-25 server
 * (mcp/server.ts), on the 2.x SDK's `Server`. What the client is asked for (its model, a person) comes back as
 * `input_required`, and the call goes on in a round (mcp/rounds.ts) until the client calls the tool again.
 */
function createModernMcpServer(service: BrowserService, rounds: ToolRounds, options: McpServerOptions): Server {
  const tasks = options.tasks;
  const server = new Server(
    { name: 'browser-session-mcp', title: 'Browser sessions', version: VERSION },
    {
      capabilities: { tools: {}, ...(tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) },
      instructions: INSTRUCTIONS,
      supportedProtocolVersions: MODERN_REVISIONS,
    },
  );
  serveModernAppResources(server, service);
  if (tasks) serveTasks(server, tasks, options.owner);
  server.setRequestHandler('tools/list', () => ({ tools: listedTools(service.config) as never }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const tool = toolsByName.get(request.params.name);
    if (!tool) throw new ProtocolError(INVALID_PARAMS, `Unknown tool "${request.params.name}". Call tools/list for the available tools.`);
    const state = ctx.mcpReq.requestState<string>();
    let round: Round<LegacyResult>;
    if (typeof state === 'string') {
      try {
        round = rounds.take(state, options.owner, tool.name);
      } catch (err) {
        return errorResult(err as ServiceError) as CallToolResult;
      }
      round.answer(ctx.mcpReq.inputResponses);
    } else if (tasks && TASK_TOOLS.has(tool.name) && clientCapabilities(ctx)?.extensions?.[TASKS_EXTENSION]) {
      // The client takes tasks: the call answers a handle at once, and the work goes on in the task (serveTasks).
      let entry: TaskEntry;
      try {
        entry = tasks.create(options.owner, tool.name);
      } catch (err) {
        return errorResult(err as ServiceError) as CallToolResult;
      }
      tasks.start(entry, (started) =>
        callTool(tool, request.params.arguments ?? {}, toolCall(service, options, started, ctx, request.params.arguments, false)),
      );
      const { result: _result, inputRequests: _asks, ...task } = tasks.modernTask(entry);
      return { ...task, resultType: 'task' } as never;
    } else {
      round = new Round<LegacyResult>(options.owner, tool.name).start((started) =>
        callTool(tool, request.params.arguments ?? {}, toolCall(service, options, started, ctx, request.params.arguments)),
      );
    }
    const step = await round.next(ctx.mcpReq.signal);
    if ('done' in step) {
      rounds.drop(round);
      return step.done as CallToolResult;
    }
    try {
      rounds.keep(round);
    } catch (err) {
      return errorResult(err as ServiceError) as CallToolResult;
    }
    return inputRequired({ inputRequests: step.asks as never, requestState: step.requestState });
  });
  return server;
}

/** The live view as an MCP App (mcp/app.ts), as the 2025-11-25 server serves it. */
function serveModernAppResources(server: Server, service: BrowserService): void {
  server.registerCapabilities({ resources: {} });
  server.setRequestHandler('resources/list', () => listAppResources(service) as never);
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));
  server.setRequestHandler('resources/read', async (request) => {
    const read = await readAppResource(service, request.params.uri).catch((err: unknown) => {
      const error = toServiceError(err);
      throw new ProtocolError(INTERNAL_ERROR, `[${error.code}] ${error.message}`);
    });
    if (!read) throw new ResourceNotFoundError(request.params.uri);
    return read as never;
  });
}

/**
 * The Tasks extension's methods, for the owner's tasks (mcp/tasks.ts): tasks/get answers the status, the questions
 * open (`input_required`) or the result; tasks/update answers the questions; tasks/cancel stops the work.
 */
function serveTasks(server: Server, tasks: TaskBook, owner: string): void {
  const find = (taskId: string, ctx: ServerContext): TaskEntry => {
    // The extension's methods are for clients that declared it (in this request's capabilities).
    if (!clientCapabilities(ctx)?.extensions?.[TASKS_EXTENSION])
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as never,
        `Declare the ${TASKS_EXTENSION} extension in the request's client capabilities to use tasks.`,
      );
    const entry = tasks.get(owner, taskId);
    if (!entry)
      throw new ProtocolError(INVALID_PARAMS, `Task not found: ${taskId}. A task is kept ${TASK_TTL_MS / 60_000} minutes at most.`);
    return entry;
  };
  const byId = z.looseObject({ taskId: z.string() });
  server.setRequestHandler('tasks/get', { params: byId }, (params, ctx) => tasks.modernTask(find(params.taskId, ctx)) as never);
  // The SDK lifts inputResponses out of the params, as for a tools/call retried with its answers.
  server.setRequestHandler('tasks/update', { params: byId }, (params, ctx) => {
    find(params.taskId, ctx).round.answer(ctx.mcpReq.inputResponses);
    return {} as never;
  });
  server.setRequestHandler('tasks/cancel', { params: byId }, (params, ctx) => {
    tasks.update(find(params.taskId, ctx), 'cancelled', 'The client cancelled the task.');
    return {} as never;
  });
}

function clientCapabilities(ctx: ServerContext): (ClientCapabilities & { extensions?: Record<string, unknown> }) | undefined {
  return (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    (ClientCapabilities & { extensions?: Record<string, unknown> }) | undefined;
}

/**
 * A tool call run in a round: cancelled with the round (the client cancelled or dropped, or the task was cancelled), or
 * by the shutdown. `progress`: false for a task, whose call has been answered already.
 */
function toolCall(
  service: BrowserService,
  options: McpServerOptions,
  round: Round<LegacyResult>,
  ctx: ServerContext,
  args: Record<string, unknown> | undefined,
  progress = true,
): ToolCall {
  const signal = untilStopped(round.controller.signal, options.stopping);
  const capabilities = clientCapabilities(ctx);
  const sent: Array<Promise<unknown>> = [];
  // Progress goes on the stream of the call that started the round; after an input_required it has ended and later
  // progress is dropped.
  const notify: Notify = (notification) => ctx.mcpReq.notify(notification as never);
  const sampling: SamplingCall = {
    capabilities,
    signal,
    createMessage: (params, { signal: callSignal, timeout }) =>
      round.ask(
        { method: 'sampling/createMessage', params: inputRequired.createMessage(params as never).params as InputAsk['params'] },
        timeout,
        callSignal,
        () => new ServiceError('model_error', `The MCP client did not answer the sampling request within ${SAMPLING_TIMEOUT_MS / 1000} s.`),
      ) as Promise<SamplingResult>,
  };
  const elicitation: ElicitationChannel = {
    supportsUrl: Boolean(capabilities?.elicitation?.url),
    elicit: ({ url, message }, timeoutMs) =>
      round.ask(
        { method: 'elicitation/create', params: inputRequired.elicitUrl({ url, message }).params as InputAsk['params'] },
        timeoutMs,
        signal,
        () => new ServiceError('timeout', 'The MCP client did not answer the request for a person in time.'),
      ) as Promise<{ action: string }>,
  };
  return {
    service,
    owner: options.owner,
    signal,
    progress: progress ? progressSender(ctx.mcpReq._meta?.progressToken, notify, args, sent) : undefined,
    modelFallback: samplingFallback(sampling),
    askHuman: urlElicitation(elicitation),
    headers: headersOf(ctx.http?.req),
    remote: options.remote,
  };
}

function headersOf(request: Request | undefined): Record<string, string> | undefined {
  return request ? Object.fromEntries(request.headers) : undefined;
}
