import { z } from 'zod';
import { ActionLogEntrySchema } from '../../core/recording/index.js';
import { defineTool } from '../tool.js';

const RecordingOutput = z.object({
  entries: z.array(ActionLogEntrySchema),
  dropped: z.number().int(),
  traceBytes: z.number().int().optional(),
});

export const sessionRecordingTool = defineTool({
  name: 'session_recording',
  title: 'Action log and trace of a session',
  description:
    "A session's action log (actionId, arguments, outcome, URL per call); trace: true adds the Playwright trace zip (sessions started with record).",
  input: z.object({ sessionId: z.string().min(1), trace: z.boolean().optional() }).strict(),
  output: RecordingOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: async ({ sessionId, trace }, ctx) => {
    const zip = trace ? await ctx.service.recording(ctx.owner, sessionId) : undefined;
    const log = ctx.service.actionLog(ctx.owner, sessionId);
    const lines = log.entries.map(
      (e) => `${e.startedAt} ${e.operation} ${e.actionId} ${e.outcome}${e.errorCode ? ` ${e.errorCode}` : ''} ${e.url}`,
    );
    return {
      structured: { ...log, ...(zip ? { traceBytes: zip.length } : {}) },
      text: [`${log.entries.length} operations${log.dropped ? ` (${log.dropped} older dropped)` : ''}.`, ...lines].join('\n'),
      ...(zip
        ? {
            resource: {
              uri: `trace:///sessions/${encodeURIComponent(sessionId)}/trace.zip`,
              mimeType: 'application/zip',
              blob: zip.toString('base64'),
            },
          }
        : {}),
    };
  },
});
