import { NavigateRequest, NavigationResponse } from '../navigate.js';
import type { OperationOutcome } from '../outcome.js';
import { defineOperation } from './define.js';
import { MCP_PAGE_TEXT_MAX_TOKENS, pageTextNote } from './extract.js';

export const navigateOperation = defineOperation({
  name: 'navigate',
  title: 'Navigate a session',
  description:
    'Open a URL in the session (or a frame, frameId) and wait until it loads. Answers the URL, status and title, then ' +
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
  run: (input, { service, owner, sessionId, ctx }) => service.navigate(owner, sessionId, input, ctx),
});

/** One line for where the navigation went (`Loaded URL (200) "Title"`), then the page text when it was read. */
function navigateText(result: NavigationResponse | null, outcome: OperationOutcome<unknown>): string {
  const page = outcome.page;
  const url = page?.url ?? result?.url ?? 'the page';
  const status = result ? ` (${result.status}${result.statusText ? ` ${result.statusText}` : ''})` : ' (same document, no request)';
  const head = `Loaded ${url}${status}${page?.title ? ` ${JSON.stringify(page.title)}` : ''}`;
  if (!page) return head;
  return [head, pageTextNote(page)].join('\n');
}
