/**
 * What a client with eyes finds in a screenshot and a scripted one has to compute: small icons (a trash can) as
 * compact shapes of ink, by their pixels.
 */
import { decodePng } from '../test/fixtures/task-policies.js';

export interface Blob {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** Icon-sized shapes (6-20 px a side) of ink (darker than 200 in all channels' mean) inside a region, top to bottom. */
export function iconsIn(png: Buffer, region: { x0?: number; x1?: number; y0?: number; y1?: number }): Blob[] {
  const { width, height, pixel } = decodePng(png);
  const [rx0, rx1] = [Math.max(0, region.x0 ?? 0), Math.min(width - 1, region.x1 ?? width - 1)];
  const [ry0, ry1] = [Math.max(0, region.y0 ?? 0), Math.min(height - 1, region.y1 ?? height - 1)];
  const ink = (x: number, y: number) => {
    const [r, g, b] = pixel(x, y);
    return (r + g + b) / 3 < 200;
  };
  const seen = new Set<number>();
  const blobs: Blob[] = [];
  for (let y = ry0; y <= ry1; y++)
    for (let x = rx0; x <= rx1; x++) {
      if (seen.has(y * width + x) || !ink(x, y)) continue;
      const blob = { x0: x, x1: x, y0: y, y1: y };
      const stack = [[x, y] as const];
      seen.add(y * width + x);
      while (stack.length) {
        const [px, py] = stack.pop()!;
        [blob.x0, blob.x1, blob.y0, blob.y1] = [Math.min(blob.x0, px), Math.max(blob.x1, px), Math.min(blob.y0, py), Math.max(blob.y1, py)];
        // Two pixels of reach: an icon's strokes with gaps between them make one shape.
        for (let dy = -2; dy <= 2; dy++)
          for (let dx = -2; dx <= 2; dx++) {
            const [nx, ny] = [px + dx, py + dy];
            if (nx < rx0 || ny < ry0 || nx > rx1 || ny > ry1 || seen.has(ny * width + nx) || !ink(nx, ny)) continue;
            seen.add(ny * width + nx);
            stack.push([nx, ny]);
          }
      }
      const [w, h] = [blob.x1 - blob.x0 + 1, blob.y1 - blob.y0 + 1];
      if (w >= 6 && w <= 20 && h >= 6 && h <= 20) blobs.push(blob);
    }
  return blobs.sort((a, b) => a.y0 - b.y0 || a.x0 - b.x0);
}

const centre = (blob: Blob) => ({ x: Math.round((blob.x0 + blob.x1) / 2), y: Math.round((blob.y0 + blob.y1) / 2) });

/** The centre of the rightmost icon in a horizontal band right of x0 (a row's actions, right of its text). */
export function iconInBand(png: Buffer, band: { x0: number; y0: number; y1: number }): { x: number; y: number } {
  const icons = iconsIn(png, band);
  if (!icons.length) throw new Error(`no icon in the band ${JSON.stringify(band)}`);
  return centre(icons.reduce((best, icon) => (icon.x1 > best.x1 ? icon : best)));
}

/** The rightmost icon of each line of icons between x0 and x1 (a column of row actions: star, trash), top to bottom. */
export function iconColumn(png: Buffer, x0: number, x1: number): Array<{ x: number; y: number }> {
  const lines: Blob[][] = [];
  for (const icon of iconsIn(png, { x0, x1 })) {
    const line = lines.find((found) => Math.abs(found[0]!.y0 - icon.y0) <= 6);
    if (line) line.push(icon);
    else lines.push([icon]);
  }
  return lines.map((line) => centre(line.reduce((best, icon) => (icon.x1 > best.x1 ? icon : best))));
}
