import { beforeEach, describe, expect, it } from 'vitest';
import type { BrowserSession } from '../src/client/index.js';
import type { ActResult, ObservedAction } from '../src/core/act/index.js';
import { useLibrarySite } from './fixtures/library-site.js';

const fixture = useLibrarySite();
let session: BrowserSession;
beforeEach(async () => {
  await session?.end().catch(() => undefined);
  session = await fixture.lib.startSession();
});

async function control(path: string, pattern: RegExp): Promise<ObservedAction> {
  await session.navigate(fixture.site.url(path));
  const { actions } = await session.page.observe();
  const found = actions.find((action) => pattern.test(action.description));
  if (!found) throw new Error(`no control matching ${pattern} on ${path}: ${JSON.stringify(actions)}`);
  return found;
}

const added = (result: ActResult) => (result.diff?.added ?? []).join('\n');

describe('act answers after the page has finished reacting', () => {
  it.each([50, 200, 900])('shows results a timer renders %i ms after the click', async (ms) => {
    const search = await control(`/settle/timer.html?ms=${ms}`, /button: Search flights/);
    const result = await session.page.act(search);
    expect(added(result)).toContain(`3 flights from Vienna found after ${ms} ms`);
    expect(added(result)).toContain('Vienna to Riga, 18:05, 74 EUR');
    expect(result.settled?.waitedFor).not.toBe('timeout');
    // extract right after sees the same settled page.
    expect((await session.page.extract()).pageText).toContain('Vienna to Lisbon');
  });

  it('shows what a fetch the server answers 300 ms late renders, and says it waited for the network', async () => {
    const result = await session.page.act(await control('/settle/fetch.html', /button: Check order 4711/));
    expect(added(result)).toContain('Order 4711 shipped on 2 March, arriving Friday');
    expect(result.settled).toMatchObject({ waitedFor: 'network' });
  });

  it('shows the suggestions of a search box debounced by 300 ms', async () => {
    const box = await control('/settle/debounce.html', /City/);
    const result = await session.page.act({ ...box, method: 'type', arguments: { text: 'ber' } });
    expect(added(result)).toMatch(/Bergen \(suggested\)[\s\S]*Berlin \(suggested\)[\s\S]*Bern \(suggested\)/);
    expect(added(result)).not.toContain('Brno');
  });

  it('shows the answer an accordion reveals when its 250 ms transition ends', async () => {
    const result = await session.page.act(await control('/settle/accordion.html', /button: How long does delivery take/));
    expect(added(result)).toContain('Delivery takes 3 to 5 working days within the EU.');
  });

  it('waits through a 2 s spinner for the result, and says so in the result and its text', async () => {
    const result = await session.page.act(await control('/settle/spinner.html', /button: Build report/));
    expect(added(result)).toContain('Report ready: 1,284 orders in March');
    expect(added(result)).not.toContain('Building the report');
    expect(result.settled).toMatchObject({ waitedFor: 'network' });
    expect(result.settled!.waitedMs).toBeGreaterThanOrEqual(1_000);
  });

  it('reports a page still busy at settleMs as timeout and reads it as it is', async () => {
    const build = await control('/settle/spinner.html', /button: Build report/);
    const result = await session.page.act({ action: build, settleMs: 300 });
    expect(result.settled).toMatchObject({ waitedFor: 'timeout', busy: 'network' });
    expect(added(result)).toContain('Building the report...');
  });

  it('is not held by a 100 ms interval clock or an open websocket', async () => {
    const add = await control('/settle/live.html', /button: Add to watchlist/);
    await expect.poll(async () => (await session.page.extract()).pageText).toContain('Feed: live');
    const result = await session.page.act(add);
    expect(added(result)).toContain('Watchlist: ACME Corp (1 item)');
    expect(['nothing', 'dom']).toContain(result.settled!.waitedFor);
  });

  it('answers the new page when a click navigates 150 ms later from a timer', async () => {
    const result = await session.page.act(await control('/settle/delayed-nav.html', /button: Pay now/));
    expect(result).toMatchObject({ navigated: true, url: fixture.site.url('/settle/receipt.html') });
    expect(result.pageText).toContain('Receipt number R-2026-0815');
  });

  it('wait with no arguments waits for work already under way', async () => {
    const build = await control('/settle/spinner.html', /button: Build report/);
    const clicked = await session.page.act({ action: build, settleMs: 0 });
    // settleMs 0 reads at once: nothing waited for (the few ms are the read itself, more on a loaded machine).
    expect(clicked.settled?.waitedFor).toBe('nothing');
    expect(clicked.settled?.waitedMs).toBeLessThan(1_000);
    const waited = await session.page.act({ method: 'wait' });
    expect(waited.message).toBe('Waited for the page to settle.');
    expect(waited.settled).toMatchObject({ waitedFor: 'network' });
    expect(added(waited)).toContain('Report ready: 1,284 orders in March');
  });
});
