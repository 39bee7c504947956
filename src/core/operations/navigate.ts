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

export const navigateOperation = defineSessionOperation({
  name: 'navigate',
  title: 'Navigate a session',
  description:
    'Open a URL (in a frame: frameId) and wait until it loads. Answers the URL, status and title, then ' +
    'the page text with refs (pageText: false for none); headers, redirects and timing are in structuredContent. ' +
    'A 404 or 500 page still succeeds: check the status.',
  summary: 'Navigate the browser of the session to a URL.',
  input: NavigateRequest,
  output: NavigationResponse.nullable().describe('The navigation response, or null for same-document navigations and about:blank.'),
  kind: 'action',
  answer: 'envelope',
  streams: true,
  mcp: { defaults: { pageText: true, maxTokens: MCP_PAGE_TEXT_MAX_TOKENS } },
  text: navigateText,
  example: { url: 'about:blank' },
  rest: { method: 'POST', path: '/v1/sessions/{id}/navigate', operationId: 'SessionNavigate' },
  work: async (session, input, { service, ctx }) => {
    const result = await navigate(session, input, service.config, ctx);
    return { result, ...(input.pageText ? { page: await loadedPage(session, input.maxTokens, ctx) } : {}) };
  },
});

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
