import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { endsOnRefusal } from '../egress/index.js';
import { ServiceError } from '../errors.js';
import type { Usage } from '../usage.js';
import { DEFAULT_TIMEOUT_MS, schemaName } from './common.js';
import { cutOffError, notJsonError, toModelError } from './errors.js';
import { dropAddedNulls, toStrictSchema } from './strict-schema.js';
import type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ContentPart,
  LLMClient,
  ModelSpec,
  StructuredRequest,
  StructuredResponse,
} from './types.js';

/** OpenAI Chat Completions (and any OpenAI-compatible server through baseURL). */
export class OpenAIClient implements LLMClient {
  readonly provider = 'openai' as const;
  readonly model: string;
  readonly supportsImages = true;
  private readonly client: OpenAI;
  private readonly secrets: Array<string | undefined>;

  constructor(spec: ModelSpec) {
    this.model = spec.model;
    this.secrets = [spec.apiKey];
    const { timeout, maxRetries, project, defaultHeaders, defaultQuery } = (spec.clientOptions ?? {}) as Record<string, never>;
    // Everything explicit: the SDK would otherwise read OPENAI_* from process.env, which may not be the service's env.
    this.client = new OpenAI({
      apiKey: spec.apiKey ?? null,
      baseURL: spec.baseURL ?? 'https://api.openai.com/v1',
      organization: spec.organization ?? null,
      project: project ?? null,
      timeout: timeout ?? DEFAULT_TIMEOUT_MS,
      maxRetries: maxRetries ?? 2,
      defaultHeaders,
      defaultQuery,
      fetch: spec.fetch,
    });
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: this.model,
      messages: toOpenAIMessages(request.system, request.messages),
      ...(request.maxOutputTokens ? { max_completion_tokens: request.maxOutputTokens } : {}),
    };
    if (request.tools?.length) {
      body.tools = request.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
      }));
      body.tool_choice = request.toolChoice ?? 'auto';
    }
    const { completion, ms } = await this.create(body, request.signal);
    const choice = firstChoice(completion, this.model);
    const message = choice.message;
    const toolCalls = (message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: parseArguments(call.function.arguments) }] : [],
    );
    const refused = !!message.refusal || choice.finish_reason === 'content_filter';
    return {
      text: message.content ?? message.refusal ?? '',
      toolCalls,
      usage: usageOf(completion, ms),
      stopReason: refused
        ? 'refusal'
        : toolCalls.length || choice.finish_reason === 'tool_calls'
          ? 'tool_calls'
          : choice.finish_reason === 'length'
            ? 'max_tokens'
            : choice.finish_reason === 'stop'
              ? 'end'
              : 'other',
    };
  }

  async generateObject(request: StructuredRequest): Promise<StructuredResponse> {
    const strict = toStrictSchema(request.schema);
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: this.model,
      messages: toOpenAIMessages(request.system, request.messages),
      response_format: {
        type: 'json_schema',
        json_schema: { name: schemaName(request.schemaName), schema: strict ?? request.schema, strict: strict !== undefined },
      },
    };
    const { completion, ms } = await this.create(body, request.signal);
    const choice = firstChoice(completion, this.model);
    const who = `OpenAI model "${this.model}"`;
    if (choice.message.refusal)
      throw new ServiceError('model_error', `The ${who} refused to answer: ${choice.message.refusal.slice(0, 300)}`);
    if (choice.finish_reason === 'content_filter')
      throw new ServiceError('model_error', `The ${who} answer was blocked by its content filter.`);
    if (choice.finish_reason === 'length') throw cutOffError(`The ${who}`);
    const content = choice.message.content ?? '';
    let value: unknown;
    try {
      value = JSON.parse(stripFence(content));
    } catch {
      throw notJsonError(
        `The ${who} did not answer with valid JSON (got ${content.length} characters starting "${content.slice(0, 80)}").`,
      );
    }
    return { value: strict ? dropAddedNulls(value, request.schema) : value, usage: usageOf(completion, ms) };
  }

  private async create(
    body: ChatCompletionCreateParamsNonStreaming,
    signal: AbortSignal | undefined,
  ): Promise<{ completion: ChatCompletion; ms: number }> {
    const started = performance.now();
    try {
      const completion = await endsOnRefusal(signal, (callSignal) => this.client.chat.completions.create(body, { signal: callSignal }));
      return { completion, ms: Math.round(performance.now() - started) };
    } catch (err) {
      throw toModelError(err, { provider: 'openai', model: this.model, signal, secrets: this.secrets });
    }
  }
}

function firstChoice(completion: ChatCompletion, model: string): ChatCompletion.Choice {
  const choice = completion.choices?.[0];
  if (!choice?.message) throw new ServiceError('model_error', `The OpenAI model "${model}" returned no answer (empty choices).`);
  return choice;
}

/** Our messages in Chat Completions form; images from tool results follow as a user message, since tool messages carry text only. */
export function toOpenAIMessages(system: string | undefined, messages: ChatMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = system ? [{ role: 'system', content: system }] : [];
  let pendingImages: ChatCompletionContentPart[] = [];
  const flush = () => {
    if (pendingImages.length)
      out.push({ role: 'user', content: [{ type: 'text', text: 'Images returned by the tool calls above:' }, ...pendingImages] });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flush();
    if (message.role === 'user') {
      out.push({ role: 'user', content: typeof message.content === 'string' ? message.content : message.content.map(toOpenAIPart) });
    } else if (message.role === 'assistant') {
      const calls = message.toolCalls ?? [];
      out.push({
        role: 'assistant',
        content: message.content || (calls.length ? null : ''),
        ...(calls.length
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: stringifyArguments(call.arguments) },
              })),
            }
          : {}),
      });
    } else {
      const parts = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
      const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
      pendingImages.push(...parts.filter((part) => part.type === 'image').map(toOpenAIPart));
      out.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.isError ? `Error: ${text}` : text || '(no text)' });
    }
  }
  flush();
  return out;
}

function toOpenAIPart(part: ContentPart): ChatCompletionContentPart {
  return part.type === 'text'
    ? { type: 'text', text: part.text }
    : { type: 'image_url', image_url: { url: `data:${part.mediaType};base64,${part.data}`, detail: part.detail ?? 'low' } };
}

function usageOf(completion: ChatCompletion, ms: number): Usage {
  const usage = completion.usage;
  const result: Usage = { input_tokens: usage?.prompt_tokens ?? 0, output_tokens: usage?.completion_tokens ?? 0, inference_time_ms: ms };
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  if (typeof reasoning === 'number') result.reasoning_tokens = reasoning;
  if (typeof cached === 'number') result.cached_input_tokens = cached;
  return result;
}

function parseArguments(raw: string): unknown {
  try {
    return raw ? JSON.parse(raw) : {};
  } catch {
    return raw;
  }
}

function stringifyArguments(args: unknown): string {
  return typeof args === 'string' ? args : JSON.stringify(args ?? {});
}

/** Some OpenAI-compatible servers wrap JSON in a markdown fence even in JSON mode. */
function stripFence(text: string): string {
  const match = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text);
  return match ? match[1]! : text;
}
