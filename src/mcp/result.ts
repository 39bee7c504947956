import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { ServiceError } from '../core/errors.js';
import type { AnyOperation, BinaryResult } from '../core/operations/index.js';
import { outcomeMeta, type OperationOutcome } from '../core/outcome.js';
import { answerForm } from '../door.js';

/**
 * The MCP door's one result builder, for every operation: structuredContent keeps the operation's output, or where it
 * declares `structured` (the page-reading tools) only the facts a program needs beside the text, never the page text
 * twice; `_meta` carries {actionId, usage?, pageEvents, wrapped?}, page events are also notes in the text, and bytes
 * become an image or resource block.
 */
export function operationResult(
  operation: AnyOperation,
  outcome: OperationOutcome<unknown>,
  extra: { notes?: string[]; actionId?: string } = {},
): CallToolResult {
  const form = answerForm(operation);
  const binary = operation.binary ? (outcome.result as BinaryResult) : undefined;
  const result = binary ? binary.info : outcome.result;
  const meta = form.carriesMeta ? outcomeMeta(outcome, extra.actionId) : undefined;
  const structured = operation.structured ? operation.structured.of(result, outcome) : form.structured(result, meta);
  const events = outcome.pageEvents.map((event) => `Note: ${event.message}${event.url ? ` (${event.url})` : ''}`);
  const text = operation.text?.(result, outcome) ?? JSON.stringify(structured);
  return {
    content: [
      { type: 'text', text: [text, ...events, ...(extra.notes ?? [])].join('\n') },
      ...(binary ? [bytesBlock(binary, `urn:browser-session-mcp:${operation.name}:${meta?.actionId ?? ''}`)] : []),
    ],
    structuredContent: structured as Record<string, unknown>,
    ...(meta ? { _meta: { ...meta } } : {}),
  };
}

/** The schema of an operation's structuredContent (its tools/list outputSchema). */
export function structuredSchema(operation: AnyOperation): z.ZodType {
  return operation.structured?.output ?? answerForm(operation).structuredSchema(operation);
}

function bytesBlock({ bytes, mediaType }: BinaryResult, uri: string): CallToolResult['content'][number] {
  const data = bytes.toString('base64');
  if (mediaType.startsWith('image/')) return { type: 'image', data, mimeType: mediaType };
  return { type: 'resource', resource: { uri, mimeType: mediaType, blob: data } };
}

export function errorResult(error: ServiceError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error [${error.code}]: ${error.message}` }], _meta: { error: error.toJSON() } };
}
