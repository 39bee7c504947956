import { describe, expect, it } from 'vitest';
import { isServiceError, type ServiceError } from '../src/core/errors.js';
import { takeSnapshot } from '../src/core/snapshot/index.js';
import { useSiteService } from './fixtures/site-service.js';
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
    const started = performance.now();
    const error = await fixture.service
      .operate('t', id, (session) => takeSnapshot(session, { callTimeoutMs: 1_000 }))
      .then(() => undefined)
      .catch((err: unknown) => err);
    const waited = performance.now() - started;
    expect(isServiceError(error) && error.code).toBe('timeout');
    // The settle wait and the read each gave the page up to 1 s: the message names the whole wait.
    const said = Number(/took (\d+) ms/.exec((error as ServiceError).message)?.[1]);
    expect(said).toBeLessThanOrEqual(waited);
    expect(said).toBeGreaterThan(waited - 500);
    expect((error as ServiceError).message).toMatch(/within 1000 ms/);
    await fixture.service.endSession('t', id);
  });
});
