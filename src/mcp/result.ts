import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceError } from '../core/errors.js';
import type { Outcome } from '../core/service.js';
import type { ToolOutput } from './tool.js';

/**
 * The MCP door's one result builder. An operation's tool hands over the core's outcome and how to shape it; the
 * actionId (the one the core logged and traced) is sent in `_meta.actionId` (structuredContent keeps the interface's shape, which for
 * navigate already has data.actionId), with the usage in `_meta.usage` and page events as `_meta.pageEvents` and notes.
 */
export function operationOutput<T, O>(
  outcome: Outcome<T>,
  shape: (result: T, actionId: string) => Pick<ToolOutput<O>, 'structured' | 'text' | 'image'>,
): ToolOutput<O> {
  const { actionId } = outcome;
  const { structured, text, image } = shape(outcome.result, actionId);
  return {
    structured,
    text,
    ...(image ? { image } : {}),
    pageEvents: outcome.pageEvents,
    meta: { actionId, ...(outcome.usage ? { usage: outcome.usage } : {}) },
  };
}

export function toCallToolResult(output: ToolOutput<unknown>): CallToolResult {
  const meta: Record<string, unknown> = { ...output.meta };
  if (output.pageEvents?.length) meta.pageEvents = output.pageEvents;
  const notes = output.pageEvents?.map((event) => `Note: ${event.message}${event.url ? ` (${event.url})` : ''}`) ?? [];
  return {
    content: [
      { type: 'text', text: [output.text ?? JSON.stringify(output.structured), ...notes].join('\n') },
      ...(output.image ? [{ type: 'image' as const, data: output.image.data, mimeType: output.image.mimeType }] : []),
      ...(output.resource ? [{ type: 'resource' as const, resource: output.resource }] : []),
    ],
    structuredContent: output.structured as Record<string, unknown>,
    ...(Object.keys(meta).length ? { _meta: meta } : {}),
  };
}

export function errorResult(error: ServiceError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error [${error.code}]: ${error.message}` }], _meta: { error: error.toJSON() } };
}
