import { ActRequest, ActResult, MAX_ACT_INPUT_BYTES, ObserveRequest, ObserveResult, settleLine } from '../act/index.js';
import type { OperationOutcome } from '../outcome.js';
import { defineOperation } from './define.js';

export const observeOperation = defineOperation({
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
  run: (input, { service, owner, sessionId, ctx }) => service.observe(owner, sessionId, input, ctx),
});

export const actOperation = defineOperation({
  name: 'act',
  title: 'Act on the page',
  description:
    'Do one thing on the page: action {ref | selector | x, y, method, arguments} (no model), or instruction ' +
    '("click sign in", a model picks it). ref: from the page text; selector: Playwright\'s ("text=Edit", "css=#go"); ' +
    'x, y: viewport px (click, dblclick, hover, dragTo). Methods: click, dblclick, fill {value}, type {text}, press {key}, ' +
    'selectOption {values}, check, uncheck, hover, scroll {direction?, screens?}, dragTo {targetRef | targetSelector | x, y; position?}, ' +
    'upload {files: [{name, contentBase64}]}, back, forward, reload, wait {text | textGone | ms}, ' +
    'newTab {url}, selectTab {tabId}, closeTab {tabId}. %name% in arguments is filled from variables, never shown. ' +
    'Returns the page change once it settles (+ added / - removed lines, or the new page).',
  summary:
    'One action on the page, {action: {ref | selector | x, y, method, arguments}} or {instruction}, and what it changed. ' +
    `Bodies up to ${MAX_ACT_INPUT_BYTES} bytes (uploads up to 25 MiB decoded).`,
  input: ActRequest,
  output: ActResult,
  kind: 'destructive',
  streams: true,
  example: { action: { method: 'wait', arguments: { ms: 1 } } },
  rest: { method: 'POST', path: '/v1/sessions/{id}/act', operationId: 'SessionAct', bodyLimit: MAX_ACT_INPUT_BYTES },
  text: actResultText,
  run: (input, { service, owner, sessionId, ctx }) => service.act(owner, sessionId, input, ctx),
});

/**
 * The act result as a client's model reads it: one line for what was done and where the page is, then the page
 * change as `+ line` / `- line` (or the new page's text), then the truncation note. No JSON: it costs tokens to read.
 */
export function actResultText(result: ActResult, { location }: Pick<OperationOutcome<unknown>, 'location'> = {}): string {
  // Where the page is only when that is news: another URL or title than the last answer showed, a new page or tab.
  const where = location || result.pageText !== undefined ? ` Page: ${result.title ? `"${result.title}" ` : ''}${result.url}` : '';
  const lines = [`${result.message}${where}`];
  if (result.pageText !== undefined) lines.push(result.navigated ? 'New page:' : 'Page:', result.pageText);
  else if (result.diff && (result.diff.added.length || result.diff.removed.length))
    lines.push(...result.diff.removed.map((line) => `- ${line}`), ...result.diff.added.map((line) => `+ ${line}`));
  else if (!result.pageChanged) lines.push('The page text did not change.');
  const settle = settleLine(result);
  if (settle) lines.push(settle);
  if (result.truncated) lines.push(result.truncated);
  if (result.tabs) lines.push(`Tabs: ${result.tabs.map((tab) => `${tab.tabId}${tab.active ? ' (active)' : ''} ${tab.url}`).join(' | ')}`);
  return lines.join('\n');
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
