import type { Page } from 'playwright-core';
import { bounded } from '../snapshot/cdp.js';
import { probeScript, type Probe } from './page-script.js';

const PROBE = probeScript('probe');
const MARK = probeScript('mark');

/** The tracker's answer for the page and its same-origin frames; null when the document cannot hold one (no DOM yet). */
export function probePage(page: Page, timeoutMs: number, command: 'probe' | 'mark' = 'probe'): Promise<Probe | null> {
  return bounded(page.evaluate<Probe | null>(command === 'mark' ? MARK : PROBE), timeoutMs, 'waiting for the page to settle');
}
