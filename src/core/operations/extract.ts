import { ExtractOptions, ExtractResult } from '../extract.js';
import { wrapResult } from '../extract-schema.js';
import { defineOperation } from './define.js';

/** MCP clients drop big results (Claude Code: over 25,000 tokens), so page text over MCP comes in parts of at most this. */
export const MCP_PAGE_TEXT_MAX_TOKENS = 20_000;

export const extractOperation = defineOperation({
  name: 'extract',
  title: 'Read or extract data from the page',
  description:
    'Read the current page of a session. ' +
    'With no instruction and no schema: returns {pageText}, ' +
    'the page as compact accessibility-tree text where links, ' +
    'buttons and fields carry refs like [12] (no model call; use this to look at a page). ' +
    'With instruction only: a model answers it from the page, returning {extraction: string}. ' +
    'With schema (a JSON Schema; an instruction helps): returns an object valid against it; ' +
    'fields with format "uri"/"url" are filled with the real hrefs of links on the page, never invented ones; ' +
    'a non-object schema comes back as {value}. selector (XPath) limits the read to one part of the page; iframes: ' +
    "true includes frame content. modelName/modelClientOptions pick the model (default: the server's). " +
    'Token usage is in _meta.usage, the id of the call in _meta.actionId.',
  summary:
    'Extract data from the page: {pageText} with no options, {extraction} for an instruction, or an object valid against a JSON Schema ({value} and wrapped: true for a non-object schema).',
  input: ExtractOptions,
  output: ExtractResult.describe(
    '{pageText} with no options, {extraction} for an instruction alone, else an object valid against the schema.',
  ),
  kind: 'read',
  streams: true,
  rest: { method: 'POST', path: '/v1/sessions/{id}/extract', operationId: 'SessionExtract' },
  mcp: { defaults: { maxTokens: MCP_PAGE_TEXT_MAX_TOKENS } },
  text: extractionText,
  run: async (input, { service, owner, sessionId, ctx }) => {
    const outcome = await service.extract(owner, sessionId, input, ctx);
    // Results are objects on every door; the library unwraps `{value}` again by `wrapped`.
    return { ...outcome, result: wrapResult(outcome.result, outcome.wrapped) };
  },
});

/** The two text forms read best as plain text (a part of the page text saying what is left); structured results as JSON (undefined). */
function extractionText(structured: Record<string, unknown>): string | undefined {
  const only = Object.keys(structured);
  if (only.length === 1 && typeof structured.pageText === 'string') return structured.pageText;
  const { pageText, nextCursor, remainingTokens } = structured;
  if (only.length === 3 && typeof pageText === 'string' && typeof nextCursor === 'string') {
    return `${pageText}\n(page text continues: about ${String(remainingTokens)} more tokens; call extract again with cursor "${nextCursor}")`;
  }
  if (only.length === 1 && typeof structured.extraction === 'string') return structured.extraction;
  return undefined;
}
