import {
  act,
  actResultText,
  methodList,
  ActListedRequest,
  ActRequest,
  ActResult,
  MAX_ACT_INPUT_BYTES,
  observe,
  ObserveRequest,
  ObserveResult,
} from '../act/index.js';
import { z } from 'zod';
import type { OperationOutcome } from '../outcome.js';
import { defineSessionOperation, produced, READING } from './define.js';

export { actResultText };

/** observe's MCP structuredContent: the refs found; their methods and descriptions are the text's lines. */
const ObserveFacts = z
  .object({ refs: z.array(z.string()).describe('In the order of the text lines.') })
  .describe(
    "The refs found. Each one's method, arguments and description are the text content's lines (hand those to the model); REST and the library answer them as objects.",
  );

/** act's MCP structuredContent: what the action did; the change itself stays in the text. */
const ActFacts = z
  .object({
    success: z.boolean(),
    pageChanged: z.literal(true).optional().describe('Present when the page changed; absent: it did not.'),
    navigated: z.literal(true).optional().describe('Present when the action loaded another document; absent: it did not.'),
    ref: z.string().optional().describe("The element acted on (the last action's)."),
    url: z.string().optional().describe('With title, when the text says where the page is: a new page, another URL or title.'),
    title: z.string().optional(),
    failed: z
      .object({ step: z.number().int(), code: z.string() })
      .optional()
      .describe('With actions: the one that failed (1-based) and its error code.'),
  })
  .describe(
    'What the action did. The page change (or the new page) is the text content: hand that to the model. REST and the library answer the whole result.',
  );

export const observeOperation = defineSessionOperation({
  name: 'observe',
  title: 'Find elements to act on',
  description:
    'List the elements one can act on, each {ref, description, method, arguments} ready to pass to act as action ' +
    '(add the value to fill). Without instruction: every interactive element (no model); with one, those a model picks.',
  summary: 'The elements one can act on, each {ref, description, method, arguments}; with an instruction, those a model picks.',
  input: ObserveRequest,
  output: ObserveResult,
  kind: 'read',
  streams: true,
  example: {},
  rest: { method: 'POST', path: '/v1/sessions/{id}/observe', operationId: 'SessionObserve' },
  text: observeResultText,
  structured: { output: ObserveFacts, of: (result) => ({ refs: result.actions.map((action) => action.ref) }) },
  work: async (session, input, { service, ctx }) => {
    ctx.progress?.(READING);
    return produced(await observe(session, input, service.config, ctx));
  },
});

export const actOperation = defineSessionOperation({
  name: 'act',
  title: 'Act on the page',
  description:
    'Do one thing on the page: action {ref | selector | x, y, method, arguments} (no model), actions [several, in order], or instruction ' +
    '("click sign in", a model picks it). selector: Playwright\'s ("text=Edit", "css=#go"); ' +
    `x, y: viewport px (click, dblclick, hover, dragTo). Arguments: ${methodList()}. Right-click: click {button: "right"}; ` +
    'press and hold: click {delay: ms}. ' +
    'Returns the page change once it settles (+ added / - removed lines, or the new page).',
  summary:
    'One action on the page, {action: {ref | selector | x, y, method, arguments}}, several in order {actions: [...]} or ' +
    '{instruction}, and what it changed. ' +
    `Bodies up to ${MAX_ACT_INPUT_BYTES} bytes (uploads up to 25 MiB decoded).`,
  input: ActRequest,
  output: ActResult,
  kind: 'destructive',
  streams: true,
  example: { action: { method: 'wait', arguments: { ms: 1 } } },
  rest: { method: 'POST', path: '/v1/sessions/{id}/act', operationId: 'SessionAct', bodyLimit: MAX_ACT_INPUT_BYTES },
  text: actResultText,
  structured: { output: ActFacts, of: actFacts },
  variables: (input) => input.variables,
  mcp: { listedInput: () => ActListedRequest },
  work: async (session, input, { service, ctx }) => produced(await act(session, input, service.config, ctx)),
});

/** What of the act result a program needs beside the text: the outcome, the ref, where the page is when the text says it. */
function actFacts(result: ActResult, { location }: OperationOutcome<unknown>): Record<string, unknown> {
  const where = location || result.pageText !== undefined;
  return {
    success: result.success,
    // Only when true, so an answer that changed nothing costs no more than its text.
    ...(result.pageChanged ? { pageChanged: true } : {}),
    ...(result.navigated ? { navigated: true } : {}),
    ...(result.action.ref !== undefined ? { ref: result.action.ref } : {}),
    ...(where ? { url: result.url, ...(result.title ? { title: result.title } : {}) } : {}),
    ...(result.failed ? { failed: { step: result.failed.step, code: result.failed.code } } : {}),
  };
}

/** Observe results one per line, `[ref] method: description`, the way the page text shows refs. */
export function observeResultText(result: ObserveResult): string {
  if (!result.actions.length) return 'No matching elements.';
  return result.actions
    .map(
      (action) =>
        `[${action.ref}] ${action.method}${Object.keys(action.arguments).length ? ` ${JSON.stringify(action.arguments)}` : ''}: ${action.description}`,
    )
    .join('\n');
}
