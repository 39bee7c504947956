import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { ModelFallback } from '../core/llm/types.js';
import type { ProgressEvent } from '../core/operation.js';
import type { BrowserService } from '../core/service.js';
import type { PageEvent } from '../core/sessions.js';

export interface ToolContext {
  service: BrowserService;
  /** Scope of the caller's sessions. */
  owner: string;
  signal: AbortSignal;
  progress?: (event: ProgressEvent) => void;
  /** The calling client's own model (MCP sampling) when the server has no key for the chosen one. */
  modelFallback?: ModelFallback;
}

export interface ToolOutput<O> {
  structured: O;
  /** Text for clients that do not read structuredContent; defaults to the JSON of `structured`. */
  text?: string;
  /** An image shown to the client's model after the text (screenshot). */
  image?: { data: string; mimeType: string };
  /** A file embedded after the text (the recording's trace zip, base64). */
  resource?: { uri: string; mimeType: string; blob: string };
  pageEvents?: PageEvent[];
  meta?: Record<string, unknown>;
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  /** Written for a model: what the tool does, when to use it, what it returns. */
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  run(input: z.infer<I>, ctx: ToolContext): Promise<ToolOutput<z.infer<O>>>;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodType>(tool: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return tool;
}

export interface RemoteToolCall {
  tool: string;
  /** The arguments, already valid against the tool's input schema. */
  args: Record<string, unknown>;
  /** Headers of the HTTP request that carried the call (streamable HTTP only). */
  headers?: Record<string, string | string[] | undefined>;
  signal: AbortSignal;
  /** Runs the call here; a remote handler that merges (session_list) calls it too. */
  local(): Promise<CallToolResult>;
}

/** Runs a tool call on another server instance, or returns undefined to run it here. */
export type RemoteTools = (call: RemoteToolCall) => Promise<CallToolResult> | undefined;
