import { LONG_SETTLE_MS, type Settled } from '../settle/index.js';
import type { ActResult, ObserveResult } from './schema.js';

/**
 * The act result as a client's model reads it: one line for what was done and where the page is, then the page
 * change as `+ line` / `- line` (or the new page's text), then the truncation note. No JSON: it costs tokens to read.
 */
export function actResultText(result: ActResult): string {
  // Where the page is only when that is news: after a navigation or a tab switch (pageText comes with both).
  const where = result.pageText !== undefined ? ` Page: ${result.title ? `"${result.title}" ` : ''}${result.url}` : '';
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

/** One line when the page took long to settle (or never did), so a slow page reads differently from a no-op; else none. */
export function settleLine(result: { settled?: Settled }): string | undefined {
  const settled = result.settled;
  if (!settled) return undefined;
  if (settled.waitedFor === 'timeout')
    return `The page was still busy (${settled.busy ?? 'working'}) after ${settled.waitedMs} ms; it was read as it was.`;
  if (settled.waitedMs < LONG_SETTLE_MS) return undefined;
  return `Waited ${settled.waitedMs} ms for the page to settle (${settled.waitedFor}).`;
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
