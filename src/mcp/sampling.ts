import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode as RpcErrorCode,
  McpError,
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type CreateMessageResultWithTools,
  type RequestId,
  type SamplingMessageContentBlock,
} from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../core/errors.js';
import { UsageTotal, type Usage } from '../core/usage.js';
import type {
  ChatRequest,
  ChatResponse,
  LLMClient,
  ModelFallback,
  StructuredRequest,
  StructuredResponse,
  WantedModel,
} from '../core/llm/types.js';
import { cutOffError, notJsonError } from '../core/llm/errors.js';
import {
  JsonToolCalls,
  parseJsonAnswer,
  plainMessages,
  samplingTools,
  schemaInstructions,
  toolInstructions,
  toolMessages,
} from './sampling-messages.js';

/** Longest wait for one sampling answer; the client may show the request to a person before its model runs. */
export const SAMPLING_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_TOKENS = 8_192;
/** Retries after a reply that is not the tool call JSON the JSON protocol asked for. */
const TOOL_JSON_RETRIES = 2;

export type SamplingParams = CreateMessageRequest['params'];
export type SamplingResult = CreateMessageResult | CreateMessageResultWithTools;

/**
 * The tool call that asks: what the client declared, how a sampling request reaches it, and the call's cancellation.
 * Under MCP 2025-11-25 the request goes out on the tool call's stream (`pushedSampling`); under 2026-07-28 it is an
 * input_required result the client answers by calling the tool again (mcp/rounds.ts).
 */
export interface SamplingCall {
  capabilities: ClientCapabilities | undefined;
  createMessage(params: SamplingParams, options: { signal: AbortSignal; timeout: number }): Promise<SamplingResult>;
  signal: AbortSignal;
}

/**
 * A 2025-11-25 tool call's sampling: sampling/createMessage sent by the server on the tools/call request's stream, or,
 * for a call run as a task, queued for the client's tasks/result.
 */
export function pushedSampling(
  server: Server,
  requestId: RequestId | undefined,
  signal: AbortSignal,
  relatedTask?: { taskId: string },
): SamplingCall {
  return {
    get capabilities() {
      return server.getClientCapabilities();
    },
    createMessage: (params, options) =>
      server.createMessage(params, { ...(requestId === undefined ? {} : { relatedRequestId: requestId }), relatedTask, ...options }),
    signal,
  };
}

/**
 * The door's model fallback for one tool call: the client's own model through sampling/createMessage when it declared
 * the sampling capability, else `model_not_configured` naming both ways out.
 */
export function samplingFallback(call: SamplingCall): ModelFallback {
  return (wanted) => {
    const sampling = call.capabilities?.sampling;
    if (!sampling)
      throw new ServiceError(
        'model_not_configured',
        `${wanted.missingKey} Or use an MCP client that supports sampling: the server then asks the client's own model.`,
      );
    return new SamplingClient(call, wanted, sampling.tools !== undefined);
  };
}

/** LLMClient over MCP sampling: structured answers and (without `sampling.tools`) tool calls go as JSON in text. */
export class SamplingClient implements LLMClient {
  readonly provider = 'sampling' as const;
  readonly supportsImages = true;
  private answeredBy: string | undefined;

  constructor(
    private readonly call: SamplingCall,
    private readonly wanted: WantedModel,
    /** The client declared `sampling.tools`: tool_use / tool_result content instead of the JSON protocol. */
    readonly nativeTools: boolean,
  ) {}

  /** The model the client last reported, else the one asked for. */
  get model(): string {
    return this.answeredBy ?? this.wanted.model;
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const tools = request.tools ?? [];
    if (tools.length && this.nativeTools) {
      const { result, usage } = await this.create(
        {
          messages: toolMessages(request.messages),
          systemPrompt: request.system,
          maxTokens: request.maxOutputTokens ?? DEFAULT_MAX_TOKENS,
          tools: samplingTools(tools),
          toolChoice: { mode: request.toolChoice ?? 'auto' },
        },
        request.signal,
      );
      const blocks = contentBlocks(result);
      const toolCalls = blocks.flatMap((block) =>
        block.type === 'tool_use' ? [{ id: block.id, name: block.name, arguments: block.input }] : [],
      );
      return { text: textOf(result), toolCalls, usage, stopReason: stopReason(result, toolCalls.length > 0) };
    }
    if (tools.length) return this.chatJsonTools(request);
    const { result, usage } = await this.create(
      {
        messages: plainMessages(request.messages),
        systemPrompt: request.system,
        maxTokens: request.maxOutputTokens ?? DEFAULT_MAX_TOKENS,
      },
      request.signal,
    );
    return { text: textOf(result), toolCalls: [], usage, stopReason: stopReason(result, false) };
  }

  /** Tools for a client without tool support: the model answers {"tool", "arguments"} JSON, checked and retried when wrong. */
  private async chatJsonTools(request: ChatRequest): Promise<ChatResponse> {
    const tools = request.tools ?? [];
    const required = request.toolChoice === 'required';
    const reader = new JsonToolCalls(tools);
    const systemPrompt = [request.system, toolInstructions(tools, required)].filter(Boolean).join('\n\n');
    const messages = plainMessages(request.messages);
    const usage = new UsageTotal();
    for (let attempt = 0; ; attempt++) {
      const answer = await this.create(
        { messages, systemPrompt, maxTokens: request.maxOutputTokens ?? DEFAULT_MAX_TOKENS },
        request.signal,
      );
      usage.add(answer.usage);
      const text = textOf(answer.result);
      const { calls, errors } = reader.read(text);
      // Plain text is an answer when no call is required; a call the tools reject is left to them to report.
      if (!calls.length && !required) return { text, toolCalls: [], usage: usage.total, stopReason: stopReason(answer.result, false) };
      if (calls.length && (errors.length === 0 || attempt >= TOOL_JSON_RETRIES))
        return { text: '', toolCalls: calls, usage: usage.total, stopReason: 'tool_calls' };
      if (attempt >= TOOL_JSON_RETRIES) return { text, toolCalls: [], usage: usage.total, stopReason: stopReason(answer.result, false) };
      messages.push(
        { role: 'assistant', content: { type: 'text', text: text || '(empty)' } },
        {
          role: 'user',
          content: {
            type: 'text',
            text: `That is not a valid tool call:\n- ${errors.join('\n- ')}\nReply with only the JSON {"tool": "<name>", "arguments": {...}} (or an array of them).`,
          },
        },
      );
    }
  }

  async generateObject(request: StructuredRequest): Promise<StructuredResponse> {
    const { result, usage } = await this.create(
      {
        messages: plainMessages(request.messages),
        systemPrompt: [request.system, schemaInstructions(request.schema)].filter(Boolean).join('\n\n'),
        maxTokens: DEFAULT_MAX_TOKENS,
      },
      request.signal,
    );
    const who = this.who();
    if (result.stopReason === 'maxTokens') throw cutOffError(who);
    const text = textOf(result);
    const parsed = parseJsonAnswer(text);
    // The same reason the providers' adapters give, so extract retries it like any answer that is not JSON.
    if (!parsed.ok)
      throw notJsonError(`${who} did not answer with valid JSON (got ${text.length} characters starting "${text.slice(0, 80)}").`);
    return { value: parsed.value, usage };
  }

  /** One sampling/createMessage on the tool call's stream, bounded in time, cancelled with the tool call. */
  private async create(
    params: Omit<SamplingParams, 'modelPreferences' | 'includeContext'>,
    signal: AbortSignal | undefined,
  ): Promise<{ result: SamplingResult; usage: Usage }> {
    const abort = signal && signal !== this.call.signal ? AbortSignal.any([signal, this.call.signal]) : this.call.signal;
    if (abort.aborted) throw cancelled();
    const started = performance.now();
    let result: SamplingResult;
    try {
      result = await this.call.createMessage(
        {
          ...params,
          ...(this.wanted.named ? { modelPreferences: { hints: [{ name: this.wanted.model }] } } : {}),
          includeContext: 'none',
        },
        { signal: abort, timeout: SAMPLING_TIMEOUT_MS },
      );
    } catch (err) {
      if (abort.aborted) throw cancelled(err);
      if (err instanceof ServiceError) throw err;
      if (err instanceof McpError && err.code === RpcErrorCode.RequestTimeout)
        throw new ServiceError(
          'model_error',
          `The MCP client did not answer the sampling request within ${SAMPLING_TIMEOUT_MS / 1000} s.`,
          { cause: err },
        );
      const message = err instanceof Error ? err.message : String(err);
      throw new ServiceError('model_error', `The MCP client's model did not answer the sampling request: ${message.slice(0, 500)}`, {
        cause: err,
      });
    }
    if (result.model) this.answeredBy = result.model;
    return { result, usage: reportedUsage(result, Math.round(performance.now() - started)) };
  }

  private who(): string {
    return `The MCP client's model "${this.model}"`;
  }
}

function cancelled(cause?: unknown): ServiceError {
  return new ServiceError('cancelled', 'The operation was cancelled by the client.', cause === undefined ? undefined : { cause });
}

function contentBlocks(result: SamplingResult): SamplingMessageContentBlock[] {
  return Array.isArray(result.content) ? result.content : [result.content];
}

function textOf(result: SamplingResult): string {
  return contentBlocks(result)
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('');
}

function stopReason(result: SamplingResult, calledTools: boolean): ChatResponse['stopReason'] {
  if (calledTools || result.stopReason === 'toolUse') return 'tool_calls';
  if (result.stopReason === 'maxTokens') return 'max_tokens';
  if (result.stopReason === undefined || result.stopReason === 'endTurn' || result.stopReason === 'stopSequence') return 'end';
  return 'other';
}

/**
 * Sampling results carry no token counts in the MCP schema; a client may report them in `_meta.usage`
 * ({input_tokens, output_tokens} or {inputTokens, outputTokens}). Otherwise they count 0; the time is the round trip.
 */
function reportedUsage(result: SamplingResult, ms: number): Usage {
  const reported = (result._meta?.usage ?? {}) as Record<string, unknown>;
  const count = (...keys: string[]) => {
    for (const key of keys) {
      const value = reported[key];
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
    }
    return 0;
  };
  return {
    input_tokens: count('input_tokens', 'inputTokens'),
    output_tokens: count('output_tokens', 'outputTokens'),
    inference_time_ms: ms,
  };
}
