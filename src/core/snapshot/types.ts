/** An interactive element the page text gave a ref to, e.g. "41" (the main frame's element 41) or "1-41" (frame 1's). */
export interface ElementRef {
  ref: string;
  frameId: string;
  role: string;
  name: string;
  /** Absolute href for links. */
  href?: string;
}
