import { z } from 'zod';
import { SessionInfoSchema } from '../../core/sessions.js';
import { defineTool } from '../tool.js';

export const sessionListTool = defineTool({
  name: 'session_list',
  title: 'List browser sessions',
  description:
    'List your open browser sessions with their current URL, last use, expiry and recent page events (dialogs, popups, crashes).',
  input: z.object({}).strict(),
  output: z.object({ sessions: z.array(SessionInfoSchema) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: async (_input, ctx) => ({ structured: { sessions: ctx.service.listSessions(ctx.owner) } }),
});
