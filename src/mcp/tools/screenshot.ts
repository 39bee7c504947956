import { z } from 'zod';
import { ScreenshotRequest } from '../../core/act/index.js';
import { operationOutput } from '../result.js';
import { defineTool } from '../tool.js';

const ScreenshotOutput = z.object({
  mimeType: z.enum(['image/png', 'image/jpeg']),
  width: z.number().int(),
  height: z.number().int(),
  bytes: z.number().int(),
});

export const screenshotTool = defineTool({
  name: 'screenshot',
  title: 'Screenshot the page',
  description:
    'An image of the viewport, the full page (fullPage) or one element (ref); png or jpeg. ' +
    'Capped at 2000 px a side and 2 MiB. The page text (extract) is cheaper when layout does not matter.',
  input: ScreenshotRequest.extend({ sessionId: z.string().min(1).describe('Id from session_start.') }).strict(),
  output: ScreenshotOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  run: async ({ sessionId, ...request }, ctx) => {
    const outcome = await ctx.service.screenshot(ctx.owner, sessionId, request, ctx);
    return operationOutput(outcome, ({ image, mimeType, width, height, bytes }) => ({
      structured: { mimeType, width, height, bytes },
      text: `Screenshot ${width}x${height} ${mimeType}, ${bytes} bytes.`,
      image: { data: image.toString('base64'), mimeType },
    }));
  },
});
