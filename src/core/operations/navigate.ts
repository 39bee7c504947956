import { z } from 'zod';
import { isAbortError, ServiceError } from '../errors.js';
import { firstPart } from '../extract-parts.js';
import { locationShown } from '../location.js';
import { navigate, NavigateRequest, NavigationResponse } from '../navigate.js';
import type { OperationContext } from '../operation.js';
import type { LoadedPage, OperationOutcome } from '../outcome.js';
import type { Session } from '../sessions.js';
import { takeSnapshot } from '../snapshot/index.js';
import { defineSessionOperation } from './define.js';
import { MCP_PAGE_TEXT_MAX_TOKENS, pageTextNote } from './extract.js';

/** navigate's MCP structuredContent: where it went, as the text's first line says; the page text stays in the text. */
const NavigateFacts = z
  .object({
    url: z.string().optional().describe('Absent only for a same-document navigation or about:blank without page text.'),
    status: z.number().int().nullable().describe('HTTP status: a 404 or 500 page still succeeds. null: same document, no request.'),
    title: z.string().optional().describe('With the page text.'),
    nextCursor: z.string().optional().describe("The page text continues: extract's cursor."),
    remainingTokens: z.number().int().optional(),
  })
  .describe(
    'Where the navigation went. The page text is the text content (hand that to the model); headers, redirects and timing: REST and the library.',
  );

export const navigateOperation = defineSessionOperation({
  name: 'navigate',
  title: 'Navigate a session',
  description:
    'Open a URL (in a frame: frameId) and wait until it loads. Answers the URL, status and title, then ' +
    'the page text with refs (pageText: false for none). ' +
    'A 404 or 500 page still succeeds: check the status.',
  summary: 'Navigate the browser of the session to a URL.',
  input: NavigateRequest,
  output: NavigationResponse.nullable().describe('The navigation response, or null for same-document navigations and about:blank.'),
  kind: 'action',
  answer: 'envelope',
  streams: true,
  mcp: { defaults: { pageText: true, maxTokens: MCP_PAGE_TEXT_MAX_TOKENS } },
  text: navigateText,
  structured: { output: NavigateFacts, of: navigateFacts },
  example: { url: 'about:blank' },
  rest: { method: 'POST', path: '/v1/sessions/{id}/navigate', operationId: 'SessionNavigate' },
  work: async (session, input, { service, ctx }) => {
    const result = await navigate(session, input, service.config, ctx);
    return { result, ...(input.pageText ? { page: await loadedPage(session, input.maxTokens, ctx) } : {}) };
  },
});

/** What of the navigation the text's first line says, and where its page text continues. */
function navigateFacts(result: NavigationResponse | null, { page }: OperationOutcome<unknown>): Record<string, unknown> {
  const url = page?.url ?? result?.url;
  return {
    ...(url !== undefined ? { url } : {}),
    status: result?.status ?? null,
    ...(page?.title ? { title: page.title } : {}),
    ...(page?.nextCursor !== undefined ? { nextCursor: page.nextCursor, remainingTokens: page.remainingTokens } : {}),
  };
}

/**
 * The page a navigation loaded, as text within `maxTokens` (the rest by extract's cursor); the client has now seen its
 * URL and title. A page that cannot be read says so in its text: the navigation itself succeeded.
 */
async function loadedPage(session: Session, maxTokens: number | undefined, ctx: OperationContext): Promise<LoadedPage> {
  try {
    const snapshot = await takeSnapshot(session, {}, ctx);
    locationShown(session, { url: snapshot.url, title: snapshot.title });
    return { url: snapshot.url, title: snapshot.title, ...firstPart(session, snapshot.text, maxTokens) };
  } catch (err) {
    if (ctx.signal?.aborted || isAbortError(err)) throw err;
    const reason = err instanceof ServiceError ? err.message : 'the page did not answer';
    return { url: session.page.url(), title: '', pageText: `(The page could not be read: ${reason})` };
  }
}

/** One line for where the navigation went (`Loaded URL (200) "Title"`), then the page text when it was read. */
function navigateText(result: NavigationResponse | null, outcome: OperationOutcome<unknown>): string {
  const page = outcome.page;
  const url = page?.url ?? result?.url ?? 'the page';
  const status = result ? ` (${result.status}${result.statusText ? ` ${result.statusText}` : ''})` : ' (same document, no request)';
  const head = `Loaded ${url}${status}${page?.title ? ` ${JSON.stringify(page.title)}` : ''}`;
  if (!page) return head;
  return [head, pageTextNote(page)].join('\n');
}
