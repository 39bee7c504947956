import type { SamplingMessage, SamplingMessageContentBlock, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { lowDetailImage } from '../core/llm/images.js';
import type { ChatMessage, ContentPart, ToolCall, ToolSpec } from '../core/llm/types.js';

/**
 * Our chat messages as MCP sampling messages, and the JSON protocol that stands in for structured output and for
 * tools when the client's sampling has no tool support.
 */

type Block = Extract<SamplingMessageContentBlock, { type: 'text' | 'image' }>;

/** The client's model is billed by its own provider, most by pixels: a low-detail image goes downscaled. */
function toBlock(part: ContentPart): Block {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const image = lowDetailImage(part);
  return { type: 'image', data: image.data, mimeType: image.mediaType };
}

function blocksOf(content: string | ContentPart[]): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content.map(toBlock);
}

/**
 * Messages for a client with `sampling.tools`: tool calls as tool_use blocks, and the results of one turn's calls in
 * one user message that holds only tool_result blocks (the spec requires both), followed by any other user content.
 */
export function toolMessages(messages: ChatMessage[]): SamplingMessage[] {
  const out: SamplingMessage[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      out.push({ role: 'user', content: blocksOf(message.content) });
    } else if (message.role === 'assistant') {
      const content: SamplingMessageContentBlock[] = message.content ? [{ type: 'text', text: message.content }] : [];
      for (const call of message.toolCalls ?? [])
        content.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObject(call.arguments) });
      out.push({ role: 'assistant', content: content.length ? content : [{ type: 'text', text: '(no answer)' }] });
    } else {
      const result: SamplingMessageContentBlock = {
        type: 'tool_result',
        toolUseId: message.toolCallId,
        content: blocksOf(message.content),
        ...(message.isError ? { isError: true } : {}),
      };
      const last = out[out.length - 1];
      const lastBlocks = last && Array.isArray(last.content) ? last.content : undefined;
      if (last?.role === 'user' && lastBlocks?.length && lastBlocks.every((block) => block.type === 'tool_result')) lastBlocks.push(result);
      else out.push({ role: 'user', content: [result] });
    }
  }
  return out;
}

/**
 * Messages for a client without tool support: one content block per message (what clients before 2025-11-25 accept),
 * tool calls written as the JSON the model answered, tool results as user text. Consecutive texts of one role merge.
 */
export function plainMessages(messages: ChatMessage[]): SamplingMessage[] {
  const out: SamplingMessage[] = [];
  const push = (role: 'user' | 'assistant', block: Block) => {
    const last = out[out.length - 1];
    const lastBlock = last && !Array.isArray(last.content) ? last.content : undefined;
    if (last?.role === role && block.type === 'text' && lastBlock?.type === 'text') lastBlock.text += `\n\n${block.text}`;
    else out.push({ role, content: block });
  };
  for (const message of messages) {
    if (message.role === 'user') {
      for (const block of blocksOf(message.content)) push('user', block);
    } else if (message.role === 'assistant') {
      const calls = message.toolCalls ?? [];
      const json = calls.length ? JSON.stringify(calls.length === 1 ? callJson(calls[0]!) : calls.map(callJson)) : '';
      push('assistant', { type: 'text', text: [message.content, json].filter(Boolean).join('\n') || '(no answer)' });
    } else {
      const [first, ...rest] = blocksOf(message.content);
      const head = `Result of ${message.toolName}${message.isError ? ' (failed)' : ''}:`;
      push('user', { type: 'text', text: first?.type === 'text' ? `${head}\n${first.text}` : head });
      for (const block of first?.type === 'text' ? rest : [first!, ...rest].filter(Boolean)) push('user', block);
    }
  }
  return out;
}

function callJson(call: ToolCall): { tool: string; arguments: unknown } {
  return { tool: call.name, arguments: call.arguments ?? {} };
}

function argumentsObject(args: unknown): Record<string, unknown> {
  return typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
}

/** Tool specs as MCP Tool definitions for sampling with tools. */
export function samplingTools(tools: ToolSpec[]): Tool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: { ...tool.inputSchema, type: 'object' } as Tool['inputSchema'],
  }));
}

/** What the system prompt adds when a structured answer is wanted. */
export function schemaInstructions(schema: Record<string, unknown>): string {
  return `Answer format: reply with only one JSON value, no prose and no markdown, that is valid against this JSON Schema:\n${JSON.stringify(schema)}`;
}

/** What the system prompt adds when tools are offered to a client without tool support. */
export function toolInstructions(tools: ToolSpec[], required: boolean): string {
  const catalog = tools.map(
    (tool) => `- ${tool.name}: ${tool.description}\n  arguments (JSON Schema): ${JSON.stringify(tool.inputSchema)}`,
  );
  return [
    `Tools: you call a tool by replying with only JSON, no prose and no markdown: {"tool": "<name>", "arguments": {...}}, or a JSON array of such objects to call several in order.${required ? ' Every reply must be such a call.' : ' Reply in plain text when no tool is needed.'}`,
    'Available tools:',
    ...catalog,
  ].join('\n');
}

/** The JSON in a model's text: the whole text, a ```json fence anywhere in it, or the outermost {...} / [...]. */
export function parseJsonAnswer(text: string): { ok: true; value: unknown } | { ok: false } {
  const candidates = [text.trim()];
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fence) candidates.push(fence[1]!.trim());
  for (const [open, close] of [
    ['{', '}'],
    ['[', ']'],
  ] as const) {
    const start = text.indexOf(open);
    const end = text.lastIndexOf(close);
    if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  }
  for (const candidate of candidates) {
    try {
      return { ok: true, value: JSON.parse(candidate) };
    } catch {
      // Try the next reading.
    }
  }
  return { ok: false };
}

/** Checks tool calls the model wrote as JSON against the offered tools and their input schemas. */
export class JsonToolCalls {
  private readonly validators = new Map<string, ValidateFunction | undefined>();
  private counter = 0;

  constructor(private readonly tools: ToolSpec[]) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const tool of tools) {
      try {
        this.validators.set(tool.name, ajv.compile(tool.inputSchema));
      } catch {
        // A schema Ajv cannot compile (another draft, odd keywords) is left to the tool to check.
        this.validators.set(tool.name, undefined);
      }
    }
  }

  /** The calls in `text`, and what is wrong with them; `calls` is empty when the text holds no call at all. */
  read(text: string): { calls: ToolCall[]; errors: string[] } {
    const parsed = parseJsonAnswer(text);
    if (!parsed.ok) return { calls: [], errors: ['the answer is not JSON'] };
    const items = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
    const calls: ToolCall[] = [];
    const errors: string[] = [];
    for (const [i, item] of items.entries()) {
      const where = items.length > 1 ? `call ${i + 1}: ` : '';
      const record = (typeof item === 'object' && item !== null ? item : {}) as { tool?: unknown; arguments?: unknown };
      if (typeof record.tool !== 'string') {
        errors.push(`${where}expected an object {"tool": "<name>", "arguments": {...}}`);
        continue;
      }
      const args = record.arguments ?? {};
      calls.push({ id: `call_${++this.counter}`, name: record.tool, arguments: args });
      if (!this.validators.has(record.tool)) {
        errors.push(`${where}unknown tool "${record.tool}"; the tools are ${this.tools.map((tool) => tool.name).join(', ')}`);
        continue;
      }
      const validate = this.validators.get(record.tool);
      if (validate && !validate(args))
        for (const error of validate.errors ?? [])
          errors.push(`${where}${record.tool} arguments${error.instancePath || ''}: ${error.message}`);
    }
    return { calls, errors };
  }
}
