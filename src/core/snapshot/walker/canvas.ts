import { idOf } from './state.js';
import { clean } from './text.js';
import type { WalkNode } from './types.js';
import type { Walk } from './walk.js';

/**
 * A canvas drawn on the screen: nothing inside it can be read, so its place says where to click (coordinates are
 * viewport CSS pixels): `[7] canvas: 200x100 at 8,410`.
 */
export function canvas(walk: Walk, el: HTMLCanvasElement, out: Array<WalkNode | string>): void {
  const box = el.getBoundingClientRect();
  if (box.width < 1 || box.height < 1 || getComputedStyle(el).visibility !== 'visible') return;
  const name = clean(el.getAttribute('aria-label') ?? el.getAttribute('title') ?? '');
  const at = `${Math.round(box.width)}x${Math.round(box.height)} at ${Math.round(box.left)},${Math.round(box.top)}`;
  out.push({ r: 'canvas', n: name ? `${name} (${at})` : at, i: idOf(walk.state, el), p: { clickable: true } });
}
