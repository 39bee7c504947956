import { z } from 'zod';

/** session_start's `record`: a Playwright trace of the session (true: screenshots and DOM snapshots). */
export const RecordOption = z
  .union([z.boolean(), z.object({ screenshots: z.boolean(), snapshots: z.boolean(), video: z.boolean() }).partial().strict()])
  .describe('Record a Playwright trace (true: screenshots+snapshots).');
export type RecordOption = z.infer<typeof RecordOption>;
