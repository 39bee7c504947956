import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ActResult } from '../src/core/act/index.js';
import { countTokens } from '../src/core/tokens.js';
import { useMcpHttpClient } from './fixtures/mcp-http.js';
import { refOf } from './fixtures/refs.js';
import { useSiteHttp } from './fixtures/site-http.js';

/**
 * What a model reads after an action that changed part of a page (test/sites/act/orders.html, shop.html): values with
 * their labels, a sorted table in its new order, a closed menu in one line, a shop's next page with each price beside
 * its product. Over MCP, as a client's model gets it: the text content.
 */
describe('act answers the page change in page order, over MCP', { timeout: 120_000 }, () => {
  const fixture = useSiteHttp();
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'page-change-test' });
  let sessionId: string;

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = (await mcp.client.callTool({ name, arguments: { sessionId, ...args } })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return { text: (result.content[0] as { text: string }).text, structured: result.structuredContent };
  };
  /** Clicks the element on the line of the page text matching `pattern`: the lines of the answer, and its result. */
  const click = async (page: string, pattern: RegExp) => {
    const { text, structured } = await call('act', { action: { ref: refOf(page, pattern), method: 'click' } });
    return { lines: text.split('\n'), text, facts: structured as Pick<ActResult, 'success' | 'pageChanged' | 'navigated'> };
  };
  const read = async () => (await call('extract', {})).text;

  beforeAll(async () => {
    sessionId = ((await mcp.client.callTool({ name: 'session_start', arguments: {} })).structuredContent as { id: string }).id;
  });

  it('shows each value that changed under its label, and a closed menu in one line beside the status that replaced it', async () => {
    await call('navigate', { url: fixture.site.url('/act/orders.html') });
    const finished = await click(await read(), /button: Finish episode/);
    expect(finished.lines.slice(1)).toEqual([
      '  Last reward',
      '- 0',
      '+ 1',
      '  Last 10 average',
      '- 0',
      '+ 0.99',
      '  Episodes done',
      '- 0',
      '+ 1',
    ]);
    // structuredContent says what happened; the change itself is the text's alone.
    expect(finished.facts).toEqual({ success: true, pageChanged: true, ref: expect.any(String) });

    const opened = await click(await read(), /button: Menu/);
    expect(opened.lines.slice(1, 3)).toEqual([
      expect.stringMatching(/^\+ \[\d+\] menuitem: Profile$/),
      expect.stringMatching(/^\+ \[\d+\] menuitem: Orders$/),
    ]);
    const saved = await click(await read(), /menuitem: Settings/);
    expect(saved.lines.slice(1)).toEqual([
      expect.stringMatching(/^- 13 lines \(\[\d+\] menuitem: Profile … \[\d+\] menuitem: Settings\)$/),
      '- Nothing saved',
      '+ Settings saved',
    ]);
  });

  it('shows a table sorted as its rows in the new order, for fewer tokens than the page', async () => {
    await call('navigate', { url: fixture.site.url('/act/orders.html') });
    const sorted = await click(await read(), /button: Sort by amount/);
    const page = await read();
    const rows = page.split('\n').filter((line) => line.endsWith(' EUR |'));
    // Ana's 15 EUR was first and still is: the 29 rows after hers moved.
    expect(sorted.lines.slice(1)).toEqual([
      '- 29 lines (| Ben | Graz | 385 EUR | … | Dora | Innsbruck | 75 EUR |)',
      ...rows.slice(1).map((row) => `+ ${row}`),
    ]);
    const amounts = rows.map((row) => Number(/(\d+) EUR/.exec(row)![1]));
    expect(amounts).toEqual([...amounts].sort((a, b) => a - b));
    expect(countTokens(sorted.text)).toBeLessThan(countTokens(page));
  });

  it("shows a shop's next page as its products in order, each with its own price, and the page line after them", async () => {
    await call('navigate', { url: fixture.site.url('/act/shop.html') });
    const next = await click(await read(), /button: Next page/);
    const page = (await read()).split('\n');
    const products = page.slice(page.indexOf('### Bell Pepper'), page.indexOf('Page 2 of 2') + 1);
    expect(next.lines.slice(1)).toEqual(['- 33 lines (### Apple … Page 1 of 2)', ...products.map((line) => `+ ${line}`)]);
    expect(next.lines.slice(2, 5)).toEqual([
      '+ ### Bell Pepper',
      '+ $0.89',
      expect.stringMatching(/^\+ \[\d+\] button: Add Bell Pepper to cart$/),
    ]);
  });
});
