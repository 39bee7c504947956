import { LiveViewRequest, LiveViewResult } from '../live/index.js';
import { defineOperation } from './define.js';

export const liveViewOperation = defineOperation({
  name: 'live_view',
  title: 'Live view link',
  description: 'Link for a person to watch the page live and, if interactive, take it over (login, CAPTCHA) until Done.',
  summary:
    'A link to watch the session live and, when interactive, click and type in it (docs/live-view.md). ' +
    'The link is the only credential; it expires (default 15 min, at most 12 h). Not queued: works while an operation runs.',
  input: LiveViewRequest,
  output: LiveViewResult,
  kind: 'action',
  openWorld: false,
  answer: 'plain',
  example: { interactive: false },
  rest: { method: 'POST', path: '/v1/sessions/{id}/liveView', operationId: 'SessionLiveView', quick: true },
  run: async (input, { service, owner, sessionId }) => ({ result: await service.liveView(owner, sessionId, input), pageEvents: [] }),
});
