import type { z } from 'zod';
import { screenshot, ScreenshotInfo, ScreenshotRequest } from '../act/index.js';
import { defineSessionOperation, type BinaryResult } from './define.js';

/** The JSON part of a screenshot; the image travels as bytes (REST) or an image block (MCP). */
const ScreenshotOutput = ScreenshotInfo.pick({ mimeType: true, width: true, height: true, bytes: true, annotated: true });

export const screenshotOperation = defineSessionOperation<
  typeof ScreenshotRequest,
  typeof ScreenshotOutput,
  BinaryResult<z.infer<typeof ScreenshotOutput>>
>({
  name: 'screenshot',
  title: 'Screenshot the page',
  description:
    'An image of the viewport, the full page or one element (ref), at most 2000 px a side and 2 MiB. ' +
    'Prefer extract when layout does not matter.',
  summary:
    'A screenshot (viewport, full page or one element by ref), answered as the image bytes with their content type; ' +
    'headers x-image-width, x-image-height, x-action-id (and x-annotated-refs with annotate: the refs drawn on it). ' +
    'At most 2000 px a side and 2 MiB.',
  input: ScreenshotRequest,
  output: ScreenshotOutput,
  kind: 'read',
  example: {},
  rest: { method: 'POST', path: '/v1/sessions/{id}/screenshot', operationId: 'SessionScreenshot' },
  binary: {
    mediaTypes: ['image/png', 'image/jpeg'],
    headers: { width: 'x-image-width', height: 'x-image-height', annotated: 'x-annotated-refs' },
  },
  text: ({ width, height, mimeType, bytes, annotated }) =>
    `Screenshot ${width}x${height} ${mimeType}, ${bytes} bytes` +
    (annotated === undefined ? '.' : `, ${annotated} ref${annotated === 1 ? '' : 's'} drawn.`),
  work: async (session, input, { ctx }) => {
    const { image, mimeType, width, height, bytes, annotated } = await screenshot(session, input, { ctx });
    const info = { mimeType, width, height, bytes, ...(annotated === undefined ? {} : { annotated }) };
    return { result: { bytes: image, mediaType: mimeType, info } satisfies BinaryResult };
  },
});
