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
