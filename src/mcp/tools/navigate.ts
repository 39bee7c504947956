import { z } from 'zod';
import { NavigateRequest, NavigateResponse } from '../../core/navigate.js';
import { operationOutput } from '../result.js';
import { defineTool } from '../tool.js';

export const navigateTool = defineTool({
  name: 'navigate',
  title: 'Navigate a session',
  description:
    'Open a URL in a browser session (or in one of its frames with frameId) and wait until it loads. ' +
    'Returns the HTTP response of the page: final url, status, headers, redirect chain; result is null for same-document (#hash) navigations. ' +
    'An HTTP error page (404, 500) is still a successful navigation: check result.status. ' +
    'Read the page afterwards with extract.',
  input: NavigateRequest.extend({ sessionId: z.string().min(1).describe('Id from session_start.') }),
  output: NavigateResponse,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  run: async ({ sessionId, ...req }, ctx) => {
    const outcome = await ctx.service.navigate(ctx.owner, sessionId, req, ctx);
    return operationOutput(outcome, (result, actionId) => ({ structured: { success: true, data: { result, actionId } } }));
  },
});
