/** An interactive element the page text gave a ref to, e.g. "0-41" (frame 0, DOM node 41). */
export interface ElementRef {
  ref: string;
  frameId: string;
  role: string;
  name: string;
  /** Absolute href for links. */
  href?: string;
}
