/**
 * Waiting for the page to be still, by two policies over one in-page tracker and one network tracker: after an action
 * (after-action.ts: the page's reaction to it, strict) and before a read (before-read.ts: cheap when nothing moved).
 */
export {
  DEFAULT_SETTLE_MS,
  LONG_SETTLE_MS,
  MAX_SETTLE_MS,
  Settled,
  latestMark,
  markAction,
  settleAfterAction,
  type ActionMark,
} from './after-action.js';
export { settleDelay, waitForSettledDom, watchSettle } from './before-read.js';
export { OVERLAY_ATTRIBUTE } from './page-script.js';
