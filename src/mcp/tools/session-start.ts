import { SessionInfoSchema } from '../../core/sessions.js';
import { SessionStart } from '../../core/state/index.js';
import { defineTool } from '../tool.js';

export const sessionStartTool = defineTool({
  name: 'session_start',
  title: 'Start a browser session',
  description:
    'Start an isolated browser session (its own cookies, storage and page, starting at about:blank). Returns its id; pass that id as sessionId to every other tool. End it with session_end when done; idle sessions expire on their own.',
  input: SessionStart,
  output: SessionInfoSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: async (input, ctx) => ({ structured: await ctx.service.startSession(ctx.owner, input) }),
});
