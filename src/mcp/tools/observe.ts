import { z } from 'zod';
import { ObserveRequest, ObserveResult, observeResultText } from '../../core/act/index.js';
import { operationOutput } from '../result.js';
import { defineTool } from '../tool.js';

export const observeTool = defineTool({
  name: 'observe',
  title: 'Find elements to act on',
  description:
    'List the elements one can act on, each as {ref, description, method, arguments} ready to pass to act as action ' +
    '(add the value for fill/selectOption/type). Without instruction: every interactive element (no model); with one, ' +
    'the elements a model finds that match it. selector (XPath) limits the search.',
  input: ObserveRequest.extend({ sessionId: z.string().min(1).describe('Id from session_start.') }).strict(),
  output: ObserveResult,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  run: async ({ sessionId, ...request }, ctx) => {
    const outcome = await ctx.service.observe(ctx.owner, sessionId, request, ctx);
    return operationOutput(outcome, (result) => ({ structured: result, text: observeResultText(result) }));
  },
});
