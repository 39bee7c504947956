import { createRequire } from 'node:module';

type Counter = (text: string) => number;
let counter: Counter | undefined;

/**
 * o200k tokens of `text`. The tokenizer's tables cost about half a second of CPU to load, so they are loaded at the
 * first count (a long page text or act result), not when the server starts.
 */
export function countTokens(text: string): number {
  if (!text) return 0;
  counter ??= (createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: Counter }).countTokens;
  return counter(text);
}
