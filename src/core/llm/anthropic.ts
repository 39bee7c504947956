import Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  ImageBlockParam,
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  TextBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { endsOnRefusal } from '../egress/index.js';
import { ServiceError } from '../errors.js';
import type { Usage } from '../usage.js';
import { cutOffError, notJsonError, toModelError } from './errors.js';
import { DEFAULT_TIMEOUT_MS, schemaName } from './common.js';
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
import { lowDetailImage } from './images.js';

/** Messages requires max_tokens; large enough for long extractions. */
const DEFAULT_MAX_TOKENS = 8192;

/** Anthropic Messages; structured output is a forced tool call whose input is the answer. */
export class AnthropicClient implements LLMClient {
  readonly provider = 'anthropic' as const;
  readonly model: string;
  readonly supportsImages = true;
  private readonly client: Anthropic;
  private readonly secrets: Array<string | undefined>;

  constructor(spec: ModelSpec) {
    this.model = spec.model;
    this.secrets = [spec.apiKey];
    const { timeout, maxRetries, defaultHeaders, defaultQuery } = (spec.clientOptions ?? {}) as Record<string, never>;
    // Explicit key and URL: the SDK would otherwise read ANTHROPIC_* from process.env or a profile on disk.
    this.client = new Anthropic({
      apiKey: spec.apiKey ?? null,
      baseURL: spec.baseURL ?? 'https://api.anthropic.com',
      timeout: timeout ?? DEFAULT_TIMEOUT_MS,
      maxRetries: maxRetries ?? 2,
      defaultHeaders,
      defaultQuery,
      fetch: spec.fetch,
    });
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const body: MessageCreateParamsNonStreaming = {
      model: this.model,
      max_tokens: request.maxOutputTokens ?? DEFAULT_MAX_TOKENS,
      messages: toAnthropicMessages(request.messages),
      ...(request.system ? { system: request.system } : {}),
    };
    if (request.tools?.length) {
      body.tools = request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: tool.inputSchema as never,
      }));
      body.tool_choice = request.toolChoice === 'required' ? { type: 'any' } : { type: 'auto' };
    }
    const { message, ms } = await this.create(body, request.signal);
    const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    const toolCalls = message.content.flatMap((block) =>
      block.type === 'tool_use' ? [{ id: block.id, name: block.name, arguments: block.input }] : [],
    );
    const stop = message.stop_reason;
    return {
      text,
      toolCalls,
      usage: usageOf(message, ms),
      stopReason:
        stop === 'refusal'
          ? 'refusal'
          : stop === 'tool_use' || toolCalls.length
            ? 'tool_calls'
            : stop === 'max_tokens'
              ? 'max_tokens'
              : stop === 'end_turn' || stop === 'stop_sequence'
                ? 'end'
                : 'other',
    };
  }

  async generateObject(request: StructuredRequest): Promise<StructuredResponse> {
    const name = schemaName(request.schemaName);
    const body: MessageCreateParamsNonStreaming = {
      model: this.model,
      max_tokens: DEFAULT_MAX_TOKENS,
      messages: toAnthropicMessages(request.messages),
      ...(request.system ? { system: request.system } : {}),
      tools: [
        {
          name,
          description: 'Return the answer. Its input is the complete answer, matching the schema.',
          input_schema: request.schema as never,
        },
      ],
      tool_choice: { type: 'tool', name },
    };
    const { message, ms } = await this.create(body, request.signal);
    const who = `Anthropic model "${this.model}"`;
    const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    if (message.stop_reason === 'refusal')
      throw new ServiceError('model_error', `The ${who} refused to answer${text ? `: ${text.slice(0, 300)}` : '.'}`);
    if (message.stop_reason === 'max_tokens') throw cutOffError(`The ${who}`);
    const call = message.content.find((block) => block.type === 'tool_use' && block.name === name);
    if (!call || call.type !== 'tool_use') {
      throw notJsonError(`The ${who} did not return the structured answer${text ? ` (it said: "${text.slice(0, 200)}")` : ''}.`);
    }
    return { value: call.input, usage: usageOf(message, ms) };
  }

  private async create(body: MessageCreateParamsNonStreaming, signal: AbortSignal | undefined): Promise<{ message: Message; ms: number }> {
    const started = performance.now();
    try {
      const message = await endsOnRefusal(signal, (callSignal) => this.client.messages.create(body, { signal: callSignal }));
      return { message, ms: Math.round(performance.now() - started) };
    } catch (err) {
      throw toModelError(err, { provider: 'anthropic', model: this.model, signal, secrets: this.secrets });
    }
  }
}

/** Our messages in Messages form: tool results ride in the next user turn, and consecutive user turns merge (roles must alternate). */
export function toAnthropicMessages(messages: ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  const pushUser = (blocks: ContentBlockParam[]) => {
    const last = out[out.length - 1];
    if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(...blocks);
    else out.push({ role: 'user', content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'user') {
      pushUser(typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content.map(toAnthropicPart));
    } else if (message.role === 'assistant') {
      const blocks: ContentBlockParam[] = message.content ? [{ type: 'text', text: message.content }] : [];
      for (const call of message.toolCalls ?? []) {
        blocks.push({
          type: 'tool_use',
          id: call.id,
          name: call.name,
          input: typeof call.arguments === 'object' && call.arguments !== null ? call.arguments : {},
        });
      }
      out.push({ role: 'assistant', content: blocks.length ? blocks : [{ type: 'text', text: '(no answer)' }] });
    } else {
      const content = typeof message.content === 'string' ? message.content : message.content.map(toAnthropicPart);
      pushUser([
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          content: content as string | Array<TextBlockParam | ImageBlockParam>,
          ...(message.isError ? { is_error: true } : {}),
        },
      ]);
    }
  }
  return out;
}

/** Anthropic has no detail setting and bills by pixels: a low-detail image is downscaled before it is sent. */
function toAnthropicPart(part: ContentPart): TextBlockParam | ImageBlockParam {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const image = lowDetailImage(part);
  return { type: 'image', source: { type: 'base64', media_type: image.mediaType, data: image.data } };
}

function usageOf(message: Message, ms: number): Usage {
  const usage = message.usage;
  const cacheRead = usage?.cache_read_input_tokens ?? 0;
  // Anthropic counts cached and cache-writing input apart from input_tokens; the interface's input_tokens is the total.
  const input = (usage?.input_tokens ?? 0) + cacheRead + (usage?.cache_creation_input_tokens ?? 0);
  const result: Usage = { input_tokens: input, output_tokens: usage?.output_tokens ?? 0, inference_time_ms: ms };
  if (cacheRead) result.cached_input_tokens = cacheRead;
  const thinking = usage?.output_tokens_details?.thinking_tokens;
  if (typeof thinking === 'number') result.reasoning_tokens = thinking;
  return result;
}
