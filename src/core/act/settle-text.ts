import { LONG_SETTLE_MS, type Settled } from '../settle/index.js';

/** One line when the page took long to settle (or never did), so a slow page reads differently from a no-op; else none. */
export function settleLine(result: { settled?: Settled }): string | undefined {
  const settled = result.settled;
  if (!settled) return undefined;
  if (settled.waitedFor === 'timeout')
    return `The page was still busy (${settled.busy ?? 'working'}) after ${settled.waitedMs} ms; it was read as it was.`;
  if (settled.waitedMs < LONG_SETTLE_MS) return undefined;
  return `Waited ${settled.waitedMs} ms for the page to settle (${settled.waitedFor}).`;
}
