/** What the server and the page script share: the reader's options, its answer, and the key of its state in the page. */

/** One node of the reader's answer: a string is text; `g` marks a node that adds nothing of its own (its content does). */
export interface WalkNode {
  /** Role, as the renderer reads it (ARIA roles, and `StaticText`-free names for HTML's own: `Iframe`, `MenuListPopup`). */
  r: string;
  n?: string;
  v?: string;
  /** The element's id in this document, for refs and iframe slots. */
  i?: number;
  /**
   * States and properties: level, url, focusable, checked, pressed, selected, expanded, disabled, required, readonly;
   * a slider's min, max and vertical; a date or time input's type and format (INPUT_FORMATS); focused.
   */
  p?: Record<string, string | number | boolean>;
  c?: Array<WalkNode | string>;
  /** Ignored: transparent, its content is read in its place. */
  g?: 1;
  /** On-screen text of an aria-hidden region, and whether it is a block. */
  h?: { text: string; block: boolean };
  /** An iframe's `data-bsm-frame` stamp: the session's id for the frame it holds. */
  f?: string;
  /** A password input: its value is never in the text. */
  pw?: 1;
}

export interface WalkOptions {
  /** XPath of the part to read (the whole document when absent). */
  xpath?: string;
  /** Refuse to read more elements than this. */
  maxElements: number;
  /** Most aria-hidden regions whose on-screen text is read. */
  maxHidden: number;
  /** Most `<time datetime>` values shown after their time's text. */
  maxTimes: number;
  /** Deepest element read as structure; deeper ones give their text alone. */
  maxDepth: number;
  /** Attribute naming an iframe's frame id (stamped by the server when iframes are read). */
  frameAttribute: string;
  /** Roles a user acts on (the renderer's): their elements get ids for refs. */
  interactiveRoles: string[];
  /** How many of the objects handed in after the options are closed shadow roots; the rest are elements with a
   * click, dblclick, contextmenu, mousedown, pointerdown, keydown or drop listener (found by the server over CDP). */
  closedRoots: number;
  /** Only count the elements the read would meet (a `CountResult`): what costs in proportion to the page waits for it. */
  countOnly?: boolean;
}

/** Why the reader read nothing. */
export type WalkRefusal =
  | { ok: false; error: 'too_large'; elements: number; scoped: boolean }
  | { ok: false; error: 'not_found' }
  | { ok: false; error: 'invalid_xpath'; message: string };

export type WalkResult = { ok: true; doc: string; title: string; root: WalkNode; gone: number[] } | WalkRefusal;

/** The reader's answer with `countOnly`: the elements it would meet, at most `maxElements`. */
export type CountResult = { ok: true; elements: number } | WalkRefusal;

/** Registry key (Symbol.for) of the reader's per-document state in its world: document token, element ids, latest refs. */
export const WALKER_STATE_KEY = 'bsm.pagetext';

/**
 * The one value format of each date and time input type: what its line says and what fill takes (`hh:mm` is 24-hour);
 * the browser empties such a field given anything else. A step under a minute adds `:ss` to the time.
 */
export const INPUT_FORMATS: Readonly<Record<string, string>> = {
  date: 'yyyy-mm-dd',
  time: 'hh:mm',
  'datetime-local': 'yyyy-mm-ddThh:mm',
  month: 'yyyy-mm',
  week: 'yyyy-Www',
};
