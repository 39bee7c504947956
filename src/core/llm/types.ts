import type { Usage } from '../usage.js';

/** The one model interface the core uses; openai.ts and anthropic.ts adapt the providers' SDKs to it. */
export type Provider = 'openai' | 'anthropic';

export interface ModelSpec {
  provider: Provider;
  /** The provider's model name, without the "provider/" prefix. */
  model: string;
  apiKey?: string;
  baseURL?: string;
  organization?: string;
  /** Any other client options (timeout, maxRetries, defaultHeaders, ...). */
  clientOptions?: Record<string, unknown>;
  /** The server's policy-checked, time-bounded fetch (egress); the SDK's own fetch when unset. */
  fetch?: typeof fetch;
}

export type ContentPart =
  | { type: 'text'; text: string }
  | {
      type: 'image';
      mediaType: 'image/png' | 'image/jpeg';
      data: string;
      /** "low" (the default): sent at about 512 px (images.ts), an overview beside the page text; "high": as it is. */
      detail?: 'low' | 'high';
    };

export interface ToolCall {
  id: string;
  name: string;
  /** Parsed JSON arguments; the raw string when they were not valid JSON. */
  arguments: unknown;
}

export type ChatMessage =
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string | ContentPart[]; isError?: boolean };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of an object. */
  inputSchema: Record<string, unknown>;
}

export interface ChatRequest {
  system?: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** "required": the model must call a tool. */
  toolChoice?: 'auto' | 'required';
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

export interface ChatResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: Usage;
  stopReason: 'end' | 'tool_calls' | 'max_tokens' | 'refusal' | 'other';
}

export interface StructuredRequest {
  system?: string;
  messages: ChatMessage[];
  /** JSON Schema of an object; the provider is asked for output matching it. */
  schema: Record<string, unknown>;
  schemaName: string;
  signal?: AbortSignal;
}

export interface StructuredResponse {
  /** Parsed JSON answer, not yet validated against the schema. */
  value: unknown;
  usage: Usage;
}

export interface LLMClient {
  /** "sampling" when the calling MCP client's own model answers (see ModelFallback). */
  readonly provider: Provider | 'sampling';
  readonly model: string;
  readonly supportsImages: boolean;
  chat(request: ChatRequest): Promise<ChatResponse>;
  generateObject(request: StructuredRequest): Promise<StructuredResponse>;
}

/** The model an operation asked for when the server had no key for it. */
export interface WantedModel {
  provider: Provider;
  model: string;
  /** False when nobody named a model and `model` is only the provider's default. */
  named: boolean;
  /** The model_not_configured message: which key is missing and how to pass one. */
  missingKey: string;
}

/**
 * A model a door offers when the server has no key for the chosen provider (MCP: the client's own model through
 * sampling). Returns a client, or throws `model_not_configured` saying every way out.
 */
export type ModelFallback = (wanted: WantedModel) => LLMClient;
