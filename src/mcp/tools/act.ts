import { z } from 'zod';
import { ActRequest, ActResult, actResultText } from '../../core/act/index.js';
import { operationOutput } from '../result.js';
import { defineTool } from '../tool.js';

export const actTool = defineTool({
  name: 'act',
  title: 'Act on the page',
  description:
    'Do one thing on the page: action {ref, method, arguments} with a ref from the page text or observe (no model), ' +
    'or instruction ("click sign in", a model picks it). Methods: click, dblclick, fill {value}, type {text}, press {key}, ' +
    'selectOption {values}, check, uncheck, hover, scroll {direction?, screens?}, dragTo {targetRef}, ' +
    'upload {files: [{name, contentBase64}]}, back, forward, reload, wait {text | textGone | ms}, ' +
    'newTab {url}, selectTab {tabId}, closeTab {tabId}. %name% in arguments is filled from variables, never shown. ' +
    'Returns what was done and the page change (+ added / - removed lines, or the new page), so reading the page again is rarely needed.',
  input: ActRequest.extend({ sessionId: z.string().min(1).describe('Id from session_start.') }).strict(),
  output: ActResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  run: async ({ sessionId, ...request }, ctx) => {
    const outcome = await ctx.service.act(ctx.owner, sessionId, request, ctx);
    return operationOutput(outcome, (result) => ({ structured: result, text: actResultText(result) }));
  },
});
