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
import { defineSessionOperation, produced } from './define.js';

export { actResultText };

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
  work: async (session, input, { service, ctx }) => produced(await observe(session, input, service.config, ctx)),
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
  variables: (input) => input.variables,
  mcp: { listedInput: () => ActListedRequest },
  work: async (session, input, { service, ctx }) => produced(await act(session, input, service.config, ctx)),
});

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
