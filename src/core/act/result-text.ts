import type { PageLocation } from '../location.js';
import type { ActResult } from './schema.js';
import { settleLine } from './settle-text.js';

/**
 * The act result as a client's model reads it: one line for what was done and where the page is, then the page
 * change in page order (`diff.lines`: `+ line`, `- line`, `  context`), or the page's text (a new page, or one whose
 * change would cost more to read than the page), then the truncation note. No JSON: it costs tokens to read.
 */
export function actResultText(result: ActResult, { location }: { location?: PageLocation } = {}): string {
  // Where the page is only when that is news: another URL or title than the last answer showed, a new page or tab.
  const where = location || result.pageText !== undefined ? ` Page: ${result.title ? `"${result.title}" ` : ''}${result.url}` : '';
  const lines = [`${result.message}${where}`];
  // Several actions: a line each, then where the run stopped.
  if (result.steps) lines.push(...result.steps.map((step, i) => `${i + 1}. ${step.message}`));
  if (result.failed) lines.push(`${result.failed.step}. Failed [${result.failed.code}]: ${result.failed.message}`);
  if (result.pageText !== undefined) lines.push(result.navigated ? 'New page:' : 'Page:', result.pageText);
  else if (result.diff?.lines?.length) lines.push(...result.diff.lines);
  else if (result.diff && (result.diff.added.length || result.diff.removed.length))
    lines.push(...result.diff.removed.map((line) => `- ${line}`), ...result.diff.added.map((line) => `+ ${line}`));
  else if (!result.pageChanged) lines.push('The page text did not change.');
  const settle = settleLine(result);
  if (settle) lines.push(settle);
  if (result.truncated) lines.push(result.truncated);
  if (result.tabs) lines.push(`Tabs: ${result.tabs.map((tab) => `${tab.tabId}${tab.active ? ' (active)' : ''} ${tab.url}`).join(' | ')}`);
  return lines.join('\n');
}
