import type { CDPSession, Page } from 'playwright-core';
import { ServiceError } from '../errors.js';
import { FeatureState } from './state.js';

/** A feature that must see a page from its creation, before its first navigation (e.g. the page text's settle tracking). */
export type PageWatcher = (page: WatchedPage) => void;

/**
 * One page of a session and what belongs to it alone: its crash, its CDP session, per-feature page state.
 * A session watches each page it keeps (today one; tabs would be more), so every page gets the same treatment.
 */
export class WatchedPage {
  /** Per-feature state that lives and dies with this page (a new page starts fresh). */
  readonly state = new FeatureState();
  /**
   * Rejects with `page_crashed` once the page crashes. Raw CDP calls to a crashed renderer never answer (Playwright's
   * own calls do fail), so work that sends them races this instead of waiting out its timeout.
   */
  readonly crash: Promise<never>;
  private crashedFlag = false;
  private session: Promise<CDPSession> | undefined;

  constructor(readonly page: Page) {
    this.crash = new Promise<never>((_, reject) =>
      page.once('crash', () => {
        this.crashedFlag = true;
        reject(
          new ServiceError(
            'page_crashed',
            'The page crashed (out of memory or a renderer fault) while it was being read. The session now has a fresh blank page; navigate again to continue.',
          ),
        );
      }),
    );
    this.crash.catch(() => undefined);
    // Opened now, while the browser is idle: opening one later, beside a renderer busy with a huge page, can time out.
    this.session = this.open();
  }

  get crashed(): boolean {
    return this.crashedFlag;
  }

  /** The page's own CDP session, opened once when the page was watched and shared by every raw CDP call on it. */
  cdp(): Promise<CDPSession> {
    return (this.session ??= this.open());
  }

  private open(): Promise<CDPSession> {
    const session = this.page.context().newCDPSession(this.page);
    // A failed open is retried by the next call rather than failing every later one.
    session.catch(() => {
      if (this.session === session) this.session = undefined;
    });
    return session;
  }
}
