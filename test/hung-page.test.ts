import { describe, expect, it } from 'vitest';
import { isServiceError, type ServiceError } from '../src/core/errors.js';
import { takeSnapshot } from '../src/core/snapshot/index.js';
import { useSiteService } from './fixtures/site-service.js';
import { within } from './fixtures/within.js';
import { actOperation, extractOperation, navigateOperation } from '../src/core/operations/index.js';

describe('a page whose script loops forever after it loaded', () => {
  const fixture = useSiteService();

  /** A session on /pages/loop.html once its loop runs (a trivial script no longer answers within 200 ms). */
  async function hungSession(): Promise<string> {
    const id = (await fixture.service.startSession('t')).id;
    const loaded = await fixture.service.run(navigateOperation, 't', id, { url: fixture.site.url('/pages/loop.html') });
    expect(loaded.result?.status).toBe(200);
    const page = fixture.service.sessions.get(id, 't').page;
    const answers = () => Promise.race([page.evaluate(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, 200, false))]);
    await expect.poll(answers, { timeout: 10_000 }).toBe(false);
    return id;
  }

  it('does not block the next navigate: the page is replaced before it starts', async () => {
    const id = await hungSession();
    // Without recovery this navigate waits for the hung document until its own timeout (navigation_timeout).
    const next = await fixture.service.run(navigateOperation, 't', id, {
      url: fixture.site.url('/index.html'),
      options: { timeout: 20_000 },
    });
    expect(next.result).toMatchObject({ status: 200, url: fixture.site.url('/index.html') });
    expect(next.pageEvents).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'unresponsive' })]));
    await fixture.service.endSession('t', id);
  });

  it('a click at a point whose handler never returns answers timeout within timeoutMs, and the next navigate works', async () => {
    const id = (await fixture.service.startSession('t')).id;
    await fixture.service.run(navigateOperation, 't', id, { url: fixture.site.url('/pages/click-loop.html') });
    const text = (await fixture.service.run(extractOperation, 't', id, {})).result as { pageText: string };
    const [, x, y] = /canvas: \d+x\d+ at (\d+),(\d+)/.exec(text.pageText)!.map(Number);
    const error = await fixture.service
      .run(actOperation, 't', id, { action: { method: 'click', x: x! + 20, y: y! + 20 }, timeoutMs: 2_000 })
      .then(() => undefined)
      .catch((err: unknown) => err);
    expect(isServiceError(error) && error.code).toBe('timeout');
    const next = await fixture.service.run(navigateOperation, 't', id, {
      url: fixture.site.url('/index.html'),
      options: { timeout: 20_000 },
    });
    expect(next.result).toMatchObject({ status: 200 });
    await fixture.service.endSession('t', id);
  });

  it('a read that times out says how long it really took, not only the bound of its last call', async () => {
    const id = await hungSession();
    // Timed inside the operation: the operation then frees the page (issue 40 item 5), which is no part of the read.
    const { result } = await fixture.service.operate('t', id, async (session) => {
      const started = performance.now();
      const error = await takeSnapshot(session, { callTimeoutMs: 1_000 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      return { error, waited: performance.now() - started };
    });
    const { error, waited } = result;
    expect(isServiceError(error) && error.code).toBe('timeout');
    // The settle wait and the read each gave the page up to 1 s: the message names the whole wait.
    const said = Number(/took (\d+) ms/.exec((error as ServiceError).message)?.[1]);
    // The message rounds to whole milliseconds, and its clock starts a moment before this one's: 2 ms of slack.
    expect(said).toBeLessThanOrEqual(waited + 2);
    expect(said).toBeGreaterThan(waited - 500);
    expect((error as ServiceError).message).toMatch(/within 1000 ms/);
    await fixture.service.endSession('t', id);
  });
});

describe('a page call that times out on a stuck page (issue 40 item 5)', () => {
  const fixture = useSiteService();
  /** The issue measured 20-23 s for the call after the stuck one; the bound it set is 2 s. */
  const NEXT_CALL_BOUND_MS = 2_000;

  /** Runs `call` and answers how long it took, failing the test when it passes `NEXT_CALL_BOUND_MS`. */
  async function quick<T>(call: () => Promise<T>, what: string): Promise<T> {
    const started = performance.now();
    const result = await within(call(), 30_000, what);
    expect(performance.now() - started, what).toBeLessThan(NEXT_CALL_BOUND_MS);
    return result;
  }

  /** The error of an act that is expected to fail. */
  const failure = (id: string, action: Record<string, unknown>) =>
    fixture.service
      .run(actOperation, 't', id, { action: action as never, timeoutMs: 2_000 })
      .then(() => undefined)
      .catch((err: unknown) => err as ServiceError);

  /** After the stuck call: act wait 10 ms reads the page, extract answers, each within NEXT_CALL_BOUND_MS. */
  async function expectUsable(id: string, text: string): Promise<void> {
    const waited = await quick(
      () => fixture.service.run(actOperation, 't', id, { action: { method: 'wait', arguments: { ms: 10 } } }),
      'act wait 10 ms',
    );
    expect(waited.result).toMatchObject({ success: true });
    expect(waited.result.truncated ?? '').not.toMatch(/could not be read/);
    const read = await quick(() => fixture.service.run(extractOperation, 't', id, {}), 'extract');
    expect((read.result as { pageText: string }).pageText).toContain(text);
  }

  it('a click whose handler never returns: the error says the script was stopped, and the next calls answer within 2 s', async () => {
    const id = (await fixture.service.startSession('t')).id;
    await fixture.service.run(navigateOperation, 't', id, { url: fixture.site.url('/pages/click-loop.html') });
    const error = await failure(id, { method: 'click', selector: '#trap' });
    expect(isServiceError(error) && ['timeout', 'action_timeout']).toContain(error!.code);
    expect(error!.message).toMatch(/script .*stopped/i);
    await expectUsable(id, 'mouse-down handler never returns');
    await fixture.service.endSession('t', id);
  });

  it('a selector whose regex backtracks: the error says the script was stopped, and the next calls answer within 2 s', async () => {
    const id = (await fixture.service.startSession('t')).id;
    await fixture.service.run(navigateOperation, 't', id, { url: fixture.site.url('/hostile/backtrack.html') });
    const error = await failure(id, { method: 'click', selector: 'text=/(a+)+$/' });
    expect(isServiceError(error) && ['timeout', 'action_timeout']).toContain(error!.code);
    expect(error!.message).toMatch(/script .*stopped/i);
    await expectUsable(id, 'backtracks for ever');
    await fixture.service.endSession('t', id);
  });
});
