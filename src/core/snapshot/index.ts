import type { Locator } from 'playwright-core';
import { DEFAULTS } from '../config.js';
import { ServiceError, throwIfAborted } from '../errors.js';
import type { OperationContext } from '../operation.js';
import type { Session } from '../sessions.js';
import { DEFAULT_CALL_TIMEOUT_MS, pageSession } from '../page/cdp.js';
import { compactLines } from './compact.js';
import { rememberRead } from './last-read.js';
import { metaLine } from './meta.js';
import { flatten, framesHoldMainContent, readFrames, stampFrames, type FrameRefs } from './frames.js';
import { readFrame } from './read.js';
import { elementRef, MAIN_REF_FRAME, REFS, refNumbers, resolveRefLocator, type RefTarget } from './refs.js';
import { escaped, Renderer } from './render.js';
import { waitForSettledDom } from '../settle/index.js';
import type { ElementRef } from './types.js';

export type { ElementRef } from './types.js';

export interface PageSnapshot {
  /** Compact accessibility-tree text, one line per meaningful node, refs in [brackets]. */
  text: string;
  refs: Map<string, ElementRef>;
  url: string;
  title: string;
}

export interface SnapshotOptions {
  /** XPath, optionally prefixed "xpath=". */
  selector?: string;
  /**
   * Read the content of iframes in place (true), or show each as one line (false). Left out: in place when an iframe
   * holds the page's main content (at least half the viewport wide and high, on a page of under 1,000 characters of its own), else one line each.
   */
  iframes?: boolean;
  domSettleTimeoutMs?: number;
  /** Longest wait for any one browser call; a page stuck in a script loop fails with `timeout` after it. */
  callTimeoutMs?: number;
}

/** Most refs kept for one document across reads. */
const MAX_KEPT_REFS = 20_000;

/** Reads the page as text with element refs; the refs stay resolvable on the session while its document stays. */
export async function takeSnapshot(session: Session, options: SnapshotOptions = {}, ctx: OperationContext = {}): Promise<PageSnapshot> {
  const started = performance.now();
  try {
    return await readSnapshot(session, options, ctx);
  } catch (err) {
    if (!(err instanceof ServiceError) || err.code !== 'timeout') throw err;
    // A read that timed out may leave the renderer busy with it (a huge DOM, a script loop), holding up even
    // navigating away: the page is checked and replaced before the next operation if it no longer answers.
    session.checkResponsive();
    throw readTimeout(err, Math.round(performance.now() - started));
  }
}

/**
 * The read's timeout as the caller lived it: each browser call has its own bound, so a read can fail after several
 * calls that each took long; the message gives the whole time spent, then the call that got no answer.
 */
function readTimeout(err: ServiceError, elapsedMs: number): ServiceError {
  const { callTimeoutMs, waitingFor } = (err.details ?? {}) as { callTimeoutMs?: number; waitingFor?: string };
  if (callTimeoutMs === undefined) return err;
  return new ServiceError(
    'timeout',
    `Reading the page took ${elapsedMs} ms and was stopped: the page did not answer one call within ${callTimeoutMs} ms (${waitingFor}). ` +
      'It may be stuck in a script loop or too large. Try again, or navigate away.',
    { details: { elapsedMs, callTimeoutMs }, cause: err },
  );
}

async function readSnapshot(session: Session, options: SnapshotOptions, ctx: OperationContext): Promise<PageSnapshot> {
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  await waitForSettledDom(session, options.domSettleTimeoutMs ?? DEFAULTS.domSettleTimeoutMs, callTimeoutMs, ctx.signal);
  throwIfAborted(ctx.signal);
  const page = session.page;
  const cdp = await pageSession(session.watched, callTimeoutMs);
  if (options.iframes) await stampFrames(session, callTimeoutMs);
  // A whole-page read begins with the page's metadata (meta.ts); a selector asks for one part of the page.
  const xpath = options.selector === undefined ? undefined : xpathOf(options.selector);
  const read = await readFrame(cdp, undefined, xpath, xpath === undefined);
  throwIfAborted(ctx.signal);
  const iframes = options.iframes ?? (page.frames().length > 1 && (await framesHoldMainContent(cdp, read)));
  const mainId = session.frameId(page.mainFrame());
  // Main-frame refs are bare numbers ("12", one o200k token) unless iframe content is inlined beside them ("0-12", "1-3").
  const inlined = iframes && page.frames().length > 1;
  session.state.set(MAIN_REF_FRAME, mainId);
  const renderer = new Renderer(inlined ? `${mainId}-` : '', iframes, refNumbers(session, mainId, read), read.hidden);
  renderer.render(read.root);
  const frames: FrameRefs[] = [{ frameId: mainId, refs: renderer.refs, read }];
  if (iframes)
    frames.push(...(await readFrames(session, { cdp, read, lines: renderer.lines }, { timeoutMs: callTimeoutMs, signal: ctx.signal })));

  const targets = new Map<string, RefTarget>();
  for (const { frameId, refs, read: frameRead } of frames) {
    for (const [ref, found] of refs)
      targets.set(ref, {
        ref,
        frameId,
        ...found,
        cdpFrameId: frameRead.worlds.frameId,
        document: frameRead.document,
        password: frameRead.passwords.has(found.elementId),
      });
  }
  session.state.set(REFS, keptRefs(session.state.get(REFS), targets, read.document));
  // The session's secrets never leave as page text (a page that shows what a GET form sent, a link that carries it).
  const mask = (text: string) => session.recording.secrets.mask(text);
  const refs = new Map<string, ElementRef>();
  for (const target of targets.values()) refs.set(target.ref, maskedRef(elementRef(target), mask));
  // The remembered URL stays raw: act compares it with the page's own.
  const url = page.url();
  const body = compactLines(flatten(renderer.lines)).join('\n');
  const meta = metaLine(read.meta, { url, title: read.title, text: body });
  // The meta line holds the page's words (a description) after the reader's `meta:`: escaped as page text is.
  const text = mask(meta ? `${escaped(meta)}\n${body}` : body);
  if (options.selector === undefined) rememberRead(session, { text, url, document: read.document, iframes });
  return { text, refs, url: mask(url), title: mask(read.title) };
}

function maskedRef(ref: ElementRef, mask: (text: string) => string): ElementRef {
  return { ...ref, name: mask(ref.name), ...(ref.href === undefined ? {} : { href: mask(ref.href) }) };
}

/**
 * The ref table after a read: refs of earlier reads of the same main document stay (a narrow read, a read without
 * iframes, never takes a ref away; one whose element has gone answers `ref_not_found` when used), and this read's
 * refs are added. A new main document starts the table again.
 */
function keptRefs(before: Map<string, RefTarget>, read: Map<string, RefTarget>, mainDocument: string): Map<string, RefTarget> {
  const sameDocument = [...before.values()].some((target) => target.document === mainDocument);
  if (!sameDocument) return read;
  // The table is in the order refs were last read: a ref this read gave again moves to the end, with the new ones.
  const kept = new Map<string, RefTarget>();
  for (const [ref, target] of before) if (!read.has(ref)) kept.set(ref, target);
  // A page that keeps changing under one document (a feed) would grow the table without end: the refs read longest
  // ago go first, never one this read gave (a read holds at most the page's element cap).
  let excess = kept.size + read.size - MAX_KEPT_REFS;
  for (const ref of kept.keys()) {
    if (excess-- <= 0) break;
    kept.delete(ref);
  }
  for (const [ref, target] of read) kept.set(ref, target);
  return kept;
}

/** Strips an optional "xpath=" prefix; anything else must be XPath. */
function xpathOf(selector: string): string {
  const xpath = selector.trim().replace(/^xpath=/i, '');
  if (!xpath)
    throw new ServiceError('invalid_argument', 'selector is empty; pass an XPath such as "//main" or "xpath=//div[@id=\'content\']".');
  return xpath;
}

/** The element behind a ref of the latest snapshot, without any model call. */
export function resolveRef(session: Session, ref: string): Promise<Locator> {
  return resolveRefLocator(session, ref);
}
