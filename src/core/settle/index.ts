/** Waiting for the page to finish reacting to an action: the in-page tracker, the network tracker and the policy. */
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
