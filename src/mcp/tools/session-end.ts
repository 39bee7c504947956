import { z } from 'zod';
import { EndSessionRequest } from '../../core/state/index.js';
import { defineTool } from '../tool.js';

export const sessionEndTool = defineTool({
  name: 'session_end',
  title: 'End a browser session',
  description: 'End a browser session and free its browser context. The id stops working afterwards.',
  input: EndSessionRequest.extend({ sessionId: z.string().min(1).describe('Id from session_start.') }).strict(),
  output: z.object({ success: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: async ({ sessionId, ...request }, ctx) => {
    await ctx.service.endSession(ctx.owner, sessionId, request);
    return { structured: { success: true } };
  },
});
