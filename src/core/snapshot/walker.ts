/**
 * The page text's reader as the server sees it: the types of its options and answer, the key of its state in the page,
 * and its source. The reader itself runs in the page; it is written as typed modules in ./walker/ and bundled into
 * one page script, `WALKER_SOURCE` (walker-source.generated.ts, made by `npm run bundle:walker`).
 */
export { WALKER_STATE_KEY, type CountResult, type WalkNode, type WalkOptions, type WalkRefusal, type WalkResult } from './walker/types.js';
export { WALKER_SOURCE } from './walker-source.generated.js';
