import { NavigateRequest, NavigationResponse } from '../navigate.js';
import { defineOperation } from './define.js';

export const navigateOperation = defineOperation({
  name: 'navigate',
  title: 'Navigate a session',
  description:
    'Open a URL in the session (or a frame, frameId) and wait until it loads. Returns the HTTP response (url, status, ' +
    'headers, redirects; null for #hash navigations); a 404 or 500 page still succeeds: check result.status.',
  summary: 'Navigate the browser of the session to a URL.',
  input: NavigateRequest,
  output: NavigationResponse.nullable().describe('The navigation response, or null for same-document navigations and about:blank.'),
  kind: 'action',
  answer: 'envelope',
  streams: true,
  example: { url: 'about:blank' },
  rest: { method: 'POST', path: '/v1/sessions/{id}/navigate', operationId: 'SessionNavigate' },
  run: (input, { service, owner, sessionId, ctx }) => service.navigate(owner, sessionId, input, ctx),
});
