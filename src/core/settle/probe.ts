import { bounded } from '../page/cdp.js';
import type { WatchedPage } from '../page/watched.js';
import { probeScript, type Probe } from './page-script.js';

const PROBE = probeScript('probe');
const MARK = probeScript('mark');

/**
 * The tracker's answer for the page and its same-origin frames; null when the document cannot hold one (no DOM yet).
 * Sent over the page's CDP session rather than page.evaluate: a traced session's trace would otherwise take a DOM
 * snapshot before and after each of these polls (every 25 ms while an action settles).
 */
export function probePage(watched: WatchedPage, timeoutMs: number, command: 'probe' | 'mark' = 'probe'): Promise<Probe | null> {
  const ask = async () => {
    const cdp = await watched.cdp();
    const answer = await cdp.send('Runtime.evaluate', { expression: command === 'mark' ? MARK : PROBE, returnByValue: true });
    if (answer.exceptionDetails)
      throw new Error(`The settle probe failed: ${answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text}`);
    return (answer.result.value ?? null) as Probe | null;
  };
  return bounded(Promise.race([ask(), watched.crash]), timeoutMs, 'waiting for the page to settle');
}
