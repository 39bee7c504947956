import { NavigateRequest, NavigationResponse } from '../navigate.js';
import { defineOperation } from './define.js';

export const navigateOperation = defineOperation({
  name: 'navigate',
  title: 'Navigate a session',
  description:
    'Open a URL in a browser session (or in one of its frames with frameId) and wait until it loads. ' +
    'Returns the HTTP response of the page: final url, status, headers, redirect chain; result is null for same-document (#hash) navigations. ' +
    'An HTTP error page (404, 500) is still a successful navigation: check result.status. ' +
    'Read the page afterwards with extract.',
  summary: 'Navigate the browser of the session to a URL.',
  input: NavigateRequest,
  output: NavigationResponse.nullable().describe('The navigation response, or null for same-document navigations and about:blank.'),
  kind: 'action',
  answer: 'envelope',
  streams: true,
  rest: { method: 'POST', path: '/v1/sessions/{id}/navigate', operationId: 'SessionNavigate' },
  run: (input, { service, owner, sessionId, ctx }) => service.navigate(owner, sessionId, input, ctx),
});
