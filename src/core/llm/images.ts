import { createRequire } from 'node:module';
import type { ContentPart } from './types.js';

type ImagePart = Extract<ContentPart, { type: 'image' }>;

/**
 * Longest side of an image sent at low detail. A page screenshot beside its page text is a layout overview: OpenAI
 * bills any image at detail "low" as 85 tokens (it sees 512 px), Anthropic about width × height / 750 (1,365 for a
 * 1280×800 viewport, 219 at 512×320), and an MCP client's model whatever its provider bills.
 */
export const LOW_DETAIL_SIDE = 512;
const JPEG_QUALITY = 70;

interface Bitmap {
  width: number;
  height: number;
  data: Uint8Array;
}
interface Codecs {
  jpegjs: { decode(data: Buffer, options: object): Bitmap; encode(image: Bitmap, quality: number): { data: Buffer } };
  PNG: { sync: { read(data: Buffer): Bitmap } };
}
let codecs: Codecs | undefined;

/** Recent results, so an image that stays in the history (an integration's tool result) is scaled once. */
const scaled = new Map<string, ImagePart>();
const CACHE_SIZE = 8;

/**
 * The image with its longest side at most `maxSide` px, as JPEG (area-averaged). Parts marked detail "high" and
 * small images pass unchanged, and so does an image that cannot be decoded. The codecs are the ones Playwright
 * bundles (jpeg-js, pngjs), loaded at the first image.
 */
export function lowDetailImage(part: ImagePart, maxSide = LOW_DETAIL_SIDE): ImagePart {
  if (part.detail === 'high') return part;
  const key = `${maxSide}:${part.data}`;
  const cached = scaled.get(key);
  if (cached) return cached;
  let result = part;
  try {
    const bytes = Buffer.from(part.data, 'base64');
    const size = imageSize(bytes);
    // Decoding costs 100-300 ms of CPU for a viewport: an image already small enough is not decoded at all.
    if (size && Math.max(size.width, size.height) <= maxSide) return part;
    codecs ??= createRequire(import.meta.url)('playwright-core/lib/utilsBundle') as Codecs;
    const source =
      part.mediaType === 'image/png'
        ? codecs.PNG.sync.read(bytes)
        : codecs.jpegjs.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 256 });
    const factor = maxSide / Math.max(source.width, source.height);
    if (factor < 1) {
      const target = shrink(source, Math.max(1, Math.round(source.width * factor)), Math.max(1, Math.round(source.height * factor)));
      result = { ...part, mediaType: 'image/jpeg', data: codecs.jpegjs.encode(target, JPEG_QUALITY).data.toString('base64') };
    }
  } catch {
    // Not a PNG or baseline JPEG the codecs read: the provider scales it itself.
  }
  scaled.set(key, result);
  if (scaled.size > CACHE_SIZE) scaled.delete(scaled.keys().next().value!);
  return result;
}

/** Area-averaged downscale of RGBA pixels; transparent pixels come out over white, as JPEG has no alpha. */
function shrink(source: Bitmap, width: number, height: number): Bitmap {
  const data = new Uint8Array(width * height * 4);
  const sx = source.width / width;
  const sy = source.height / height;
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor(y * sy);
    const y1 = Math.max(y0 + 1, Math.floor((y + 1) * sy));
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor(x * sx);
      const x1 = Math.max(x0 + 1, Math.floor((x + 1) * sx));
      let r = 0;
      let g = 0;
      let b = 0;
      for (let yy = y0; yy < y1; yy++)
        for (let xx = x0; xx < x1; xx++) {
          const i = (yy * source.width + xx) * 4;
          const alpha = source.data[i + 3]! / 255;
          r += source.data[i]! * alpha + 255 * (1 - alpha);
          g += source.data[i + 1]! * alpha + 255 * (1 - alpha);
          b += source.data[i + 2]! * alpha + 255 * (1 - alpha);
        }
      const n = (y1 - y0) * (x1 - x0);
      const o = (y * width + x) * 4;
      data[o] = r / n;
      data[o + 1] = g / n;
      data[o + 2] = b / n;
      data[o + 3] = 255;
    }
  }
  return { width, height, data };
}

/** Width and height from a PNG (IHDR) or JPEG (SOF marker) header, or undefined for anything else. */
export function imageSize(image: Buffer): { width: number; height: number } | undefined {
  if (image.length >= 24 && image.readUInt32BE(0) === 0x89504e47) return { width: image.readUInt32BE(16), height: image.readUInt32BE(20) };
  for (let i = 2; i + 9 < image.length;) {
    if (image[i] !== 0xff) return undefined;
    const marker = image[i + 1]!;
    // SOF0-SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { height: image.readUInt16BE(i + 5), width: image.readUInt16BE(i + 7) };
    i += 2 + image.readUInt16BE(i + 2);
  }
  return undefined;
}
