/** Acting on the page: act, observe and screenshot, the operations every door offers and the agent's browser tools use. */
export { act } from './act.js';
export { forAction, runAction, runActions, isSettleWait, performAndSettle, type RunActionOptions } from './run.js';
export { inferAction } from './infer.js';
export { actResultText } from './result-text.js';
export { observe, interactiveElements } from './observe.js';
export { performAction, ACTION_TIMEOUT_MS, type Performed, type PerformOptions } from './perform.js';
export { screenshot, imageSize, SCREENSHOT_LIMITS, type Screenshot } from './screenshot.js';
export { DEFAULT_CHANGE_TOKENS, diffLines } from './page-change.js';
export * from './schema.js';
export { settleLine } from './settle-text.js';
export { checkSelector } from './selector.js';
export { warmTargets } from './stable-target.js';
