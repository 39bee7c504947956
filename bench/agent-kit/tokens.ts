/**
 * Prompt tokens of a Chat Completions request, counted from its body rather than taken from the provider's usage (the
 * fake model server reports fixed numbers, and OpenAI-compatible servers count images their own way): messages and
 * tools by OpenAI's published counting in o200k tokens (src/core/tokens.ts), each image by the provider's published rule.
 */
import { imageSize } from '../../src/core/llm/images.js';
import { countTokens } from '../../src/core/tokens.js';

const sizeOf = (base64: string) => imageSize(Buffer.from(base64, 'base64')) ?? { width: 512, height: 512 };

/**
 * OpenAI (GPT-4o family): 85 tokens at detail "low"; at "high" (or "auto", counted as high) the image is fit in 2048²,
 * its shortest side brought to 768, then 170 per 512² tile plus 85.
 */
export function openaiImageTokens(width: number, height: number, detail: string | undefined): number {
  if (detail === 'low') return 85;
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const shrink = Math.min(1, 768 / Math.min(width * fit, height * fit));
  return 85 + 170 * Math.ceil((width * fit * shrink) / 512) * Math.ceil((height * fit * shrink) / 512);
}

/** Anthropic: about width × height / 750, after its own downscale to 1568 px on the long side. */
export function anthropicImageTokens(width: number, height: number): number {
  const fit = Math.min(1, 1568 / Math.max(width, height));
  return Math.ceil((width * fit * height * fit) / 750);
}

export interface BodyTokens {
  /** Messages' text and tool calls: 3 per message plus their strings, 3 to prime the answer (OpenAI cookbook). */
  messages: number;
  /** Tool definitions by the cookbook's rule: 7 per function plus "name:description", 3 per property plus "name:type:description", 12 in all. */
  tools: number;
  images: number;
  imageCount: number;
}

/**
 * Prompt tokens of a Chat Completions body by OpenAI's published counting (the cookbook's num_tokens_from_messages and
 * num_tokens_for_tools for GPT-4o, o200k), the images by the rule above. JSON of the tool schemas would count the
 * tools about twice over; the model sees them rendered compactly.
 */
export function chatBodyTokens(body: any): BodyTokens {
  const counted: BodyTokens = { messages: 3, tools: 0, images: 0, imageCount: 0 };
  for (const message of body.messages ?? []) {
    counted.messages += 3 + countTokens(String(message.role ?? ''));
    const content = message.content;
    if (typeof content === 'string') counted.messages += countTokens(content);
    else if (Array.isArray(content))
      for (const part of content) {
        if (part.type === 'text') counted.messages += countTokens(part.text ?? '');
        else if (part.type === 'image_url') {
          const url: string = part.image_url?.url ?? '';
          const { width, height } = url.startsWith('data:') ? sizeOf(url.slice(url.indexOf(',') + 1)) : { width: 512, height: 512 };
          counted.images += openaiImageTokens(width, height, part.image_url?.detail);
          counted.imageCount++;
        }
      }
    if (message.tool_calls) counted.messages += countTokens(JSON.stringify(message.tool_calls.map((call: any) => call.function)));
    if (message.tool_call_id) counted.messages += countTokens(message.tool_call_id);
  }
  counted.tools = toolTokens(body.tools ?? []);
  return counted;
}

function toolTokens(tools: any[]): number {
  if (!tools.length) return 0;
  let total = 12;
  for (const tool of tools) {
    const fn = tool.function ?? tool;
    total += 7 + countTokens(`${fn.name}:${String(fn.description ?? '').replace(/\.$/, '')}`);
    const properties: Record<string, any> = fn.parameters?.properties ?? {};
    if (Object.keys(properties).length) total += 3;
    for (const [name, schema] of Object.entries(properties)) total += propertyTokens(name, schema);
  }
  return total;
}

function propertyTokens(name: string, schema: any): number {
  let total = 3;
  if (Array.isArray(schema.enum)) total += -3 + schema.enum.reduce((sum: number, item: unknown) => sum + 3 + countTokens(String(item)), 0);
  const type = Array.isArray(schema.type) ? schema.type.join('|') : (schema.type ?? 'any');
  total += countTokens(`${name}:${type}:${String(schema.description ?? '').replace(/\.$/, '')}`);
  // Nested shapes (objects, arrays of objects, unions) are beyond the cookbook's rule: their schema counts as JSON, descriptions included.
  const { description: _description, type: _type, enum: _enum, ...rest } = schema;
  if (Object.keys(rest).length) total += countTokens(JSON.stringify(rest));
  return total;
}

export const promptTokens = (tokens: BodyTokens): number => tokens.messages + tokens.tools + tokens.images;
