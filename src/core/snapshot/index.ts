import type { Locator } from 'playwright-core';
import { ServiceError } from '../errors.js';
import type { OperationContext } from '../operation.js';
import type { Session } from '../sessions.js';

/** An interactive element the page text gave a ref to, e.g. "0-41" (frame 0, node 41). */
export interface ElementRef {
  ref: string;
  frameId: string;
  role: string;
  name: string;
  /** Absolute href for links. */
  href?: string;
}

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
  iframes?: boolean;
  domSettleTimeoutMs?: number;
}

/** Reads the page as text with element refs; the refs stay resolvable on the session until the next snapshot. */
export async function takeSnapshot(_session: Session, _options: SnapshotOptions = {}, _ctx: OperationContext = {}): Promise<PageSnapshot> {
  throw new ServiceError('not_implemented', 'Page text is not available yet.');
}

/** The element behind a ref of the latest snapshot, without any model call. */
export async function resolveRef(_session: Session, ref: string): Promise<Locator> {
  throw new ServiceError('invalid_argument', `Unknown element ref "${ref}".`);
}
