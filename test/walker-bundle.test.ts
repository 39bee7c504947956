import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bundleWalker, GENERATED, GENERATED_PATH } from '../scripts/bundle-walker.js';
import { WALKER_SOURCE } from '../src/core/snapshot/walker.js';

describe('the page text reader bundle', () => {
  it('the committed walker-source.generated.ts is the bundle of src/core/snapshot/walker/', async () => {
    const { source, file } = await bundleWalker();
    const stale = `${GENERATED} is out of date with src/core/snapshot/walker/: run \`npm run bundle:walker\` and commit it`;
    expect(readFileSync(GENERATED_PATH, 'utf8') === file, stale).toBe(true);
    expect(WALKER_SOURCE === source, `${GENERATED} does not hold the bundle's text as written (escaping)`).toBe(true);
  });

  it('the page script is an expression whose value is the reader, defining nothing outside itself', () => {
    const before = Object.keys(globalThis);
    const walkPage = new Function(`return ${WALKER_SOURCE}`)() as unknown;
    expect(typeof walkPage).toBe('function');
    expect((walkPage as () => void).name).toBe('walkPage');
    expect(Object.keys(globalThis)).toEqual(before);
  });
});
