import { ServiceError } from '../errors.js';
import type { Session } from '../sessions.js';
import { DEFAULT_CALL_TIMEOUT_MS, pageSession, type Cdp } from '../page/cdp.js';
import { resolveRef } from '../snapshot/index.js';
import { actionError } from './errors.js';
import { ACTION_TIMEOUT_MS } from './perform.js';
import type { ScreenshotInfo, ScreenshotRequest } from './schema.js';
import { imageSize as headerSize } from '../llm/images.js';
import type { OperationContext } from '../operation.js';
import { drawRefs, readRefs, type Region } from './annotate.js';
import { maskSecrets } from './mask.js';

/**
 * Size caps, so a full-page screenshot of a huge page cannot flood a client or its model: the longest side is scaled
 * down to 2,000 px (models downscale larger images anyway), a full page is cut at 8,000 CSS px of height, and an image
 * over 2 MiB is re-encoded as JPEG at lower quality, then scaled down further.
 */
export const SCREENSHOT_LIMITS = { maxSide: 2_000, maxBytes: 2 * 1024 * 1024, maxFullPageHeight: 8_000 } as const;
const DEFAULT_JPEG_QUALITY = 80;
const MAX_ATTEMPTS = 6;

export interface Screenshot extends ScreenshotInfo {
  image: Buffer;
}

/**
 * A screenshot of the viewport, the full page or one element (by ref), within SCREENSHOT_LIMITS; `maxSide` asks
 * Chromium for fewer pixels still (the agent's overview for a model: no decoding and re-encoding on this thread).
 * `annotate` reads the page (as observe does) and draws the refs that show in the shot on an overlay that is taken
 * away again before this answers, whatever happens (annotate.ts). Every shot first covers what shows one of the
 * session's secrets, and filled password fields, with masks taken away alike (mask.ts, above the labels).
 */
export async function screenshot(
  session: Session,
  req: ScreenshotRequest = {},
  { maxSide = SCREENSHOT_LIMITS.maxSide, ctx = {} }: { maxSide?: number; ctx?: OperationContext } = {},
): Promise<Screenshot> {
  const refs = req.annotate ? await readRefs(session, ctx) : undefined;
  const cdp = await pageSession(session.watched, DEFAULT_CALL_TIMEOUT_MS);
  const { region, clipped, beyondViewport } = await regionOf(session, cdp, req);
  const scale = Math.min(1, Math.min(maxSide, SCREENSHOT_LIMITS.maxSide) / Math.max(region.width, region.height));
  // No picture leaves with a secret legible in it, nor a password field's length (mask.ts).
  const masks = await maskSecrets(session, cdp);
  try {
    const shot = { region, clipped, beyondViewport, scale };
    if (!refs) return await offered(session, req, region, await capture(cdp, req, shot));
    const overlay = await drawRefs(session, refs, { region, scale });
    try {
      return { ...(await capture(cdp, req, shot)), annotated: overlay.drawn };
    } finally {
      await overlay.remove();
    }
  } finally {
    await masks.remove();
  }
}

/** A masked picture of the viewport in JPEG is also a frame for the trace, when it keeps masked frames (trace.ts). */
async function offered(session: Session, req: ScreenshotRequest, region: Region, shot: Screenshot): Promise<Screenshot> {
  const trace = session.recording.trace;
  if (trace?.wantsFrames(session.recording.secrets) && !req.ref && !req.fullPage && shot.mimeType === 'image/jpeg')
    await trace.addFrame({ page: session.page, image: shot.image, width: region.width, height: region.height }).catch(() => undefined);
  return shot;
}

/** Captures the region, re-encoding and scaling down until it fits SCREENSHOT_LIMITS. */
async function capture(
  cdp: Cdp,
  req: ScreenshotRequest,
  shot: { region: Region; clipped: boolean; beyondViewport: boolean; scale: number },
): Promise<Screenshot> {
  const { region, clipped, beyondViewport } = shot;
  let { scale } = shot;
  let format = req.format ?? 'png';
  let quality = req.quality ?? DEFAULT_JPEG_QUALITY;
  for (let attempt = 1; ; attempt++) {
    const { data } = await cdp.send<{ data: string }>('Page.captureScreenshot', {
      format,
      ...(format === 'jpeg' ? { quality } : {}),
      clip: { ...region, scale },
      captureBeyondViewport: beyondViewport,
    });
    const image = Buffer.from(data, 'base64');
    if (image.length <= SCREENSHOT_LIMITS.maxBytes || attempt === MAX_ATTEMPTS) {
      const { width, height } = imageSize(image);
      return { image, mimeType: format === 'png' ? 'image/png' : 'image/jpeg', width, height, bytes: image.length, scale, clipped };
    }
    // Too large: JPEG first (photos and gradients compress 5-10x), then lower quality, then fewer pixels.
    if (format === 'png') format = 'jpeg';
    else if (quality > 40) quality = Math.max(40, quality - 20);
    else scale *= 0.7;
  }
}

async function regionOf(
  session: Session,
  cdp: Cdp,
  req: ScreenshotRequest,
): Promise<{ region: Region; clipped: boolean; beyondViewport: boolean }> {
  const metrics = await cdp.send<{
    cssContentSize: { width: number; height: number };
    cssVisualViewport: { pageX: number; pageY: number; clientWidth: number; clientHeight: number };
  }>('Page.getLayoutMetrics');
  const view = metrics.cssVisualViewport;
  if (req.ref) {
    const box = await elementBox(session, req.ref);
    // Page.captureScreenshot's clip is in document coordinates; boundingBox is relative to the viewport.
    const region = clamp({ x: box.x + view.pageX, y: box.y + view.pageY, width: box.width, height: box.height }, metrics.cssContentSize);
    const clipped = region.height > SCREENSHOT_LIMITS.maxFullPageHeight;
    if (clipped) region.height = SCREENSHOT_LIMITS.maxFullPageHeight;
    return { region, clipped, beyondViewport: true };
  }
  if (req.fullPage) {
    const { width, height } = metrics.cssContentSize;
    const clipped = height > SCREENSHOT_LIMITS.maxFullPageHeight;
    const region = {
      x: 0,
      y: 0,
      width: Math.max(1, Math.ceil(width)),
      height: Math.max(1, Math.ceil(Math.min(height, SCREENSHOT_LIMITS.maxFullPageHeight))),
    };
    return { region, clipped, beyondViewport: true };
  }
  return {
    region: { x: view.pageX, y: view.pageY, width: view.clientWidth, height: view.clientHeight },
    clipped: false,
    beyondViewport: false,
  };
}

async function elementBox(session: Session, ref: string): Promise<Region> {
  const target = `[${ref}]`;
  try {
    const element = await resolveRef(session, ref);
    await element.scrollIntoViewIfNeeded({ timeout: ACTION_TIMEOUT_MS });
    const box = await element.boundingBox({ timeout: ACTION_TIMEOUT_MS });
    if (!box || box.width < 1 || box.height < 1)
      throw new ServiceError('invalid_argument', `Element ${target} has no visible area to take a screenshot of.`);
    return box;
  } catch (err) {
    throw actionError(err, { method: 'screenshot', target, timeoutMs: ACTION_TIMEOUT_MS });
  }
}

function clamp(region: Region, page: { width: number; height: number }): Region {
  const x = Math.max(0, region.x);
  const y = Math.max(0, region.y);
  const right = Math.min(region.x + region.width, Math.max(page.width, x + 1));
  const bottom = Math.min(region.y + region.height, Math.max(page.height, y + 1));
  return { x, y, width: Math.max(1, right - x), height: Math.max(1, bottom - y) };
}

/** Width and height of a screenshot the browser returned (its PNG or JPEG header). */
export function imageSize(image: Buffer): { width: number; height: number } {
  const size = headerSize(image);
  if (!size) throw new ServiceError('internal', 'The browser returned an image of an unknown format.');
  return size;
}
