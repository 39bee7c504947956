import { z } from 'zod';
import { AgentResult } from '../core/agent/schema.js';
import { ExtractOptions, ExtractResult } from '../core/extract.js';
import { Usage } from '../core/usage.js';
import { SessionInfoSchema } from '../core/sessions.js';

/** The REST envelopes around the core's schemas; the core's request schemas are used as they are. */

export const StartSessionRequest = z.object({}).strict().describe('No start options yet; send an empty object or no body.');

export const SessionResponse = z.object({ success: z.literal(true), data: SessionInfoSchema }).strict();

export const SessionListResponse = z
  .object({
    success: z.literal(true),
    data: z
      .object({
        sessions: z.array(SessionInfoSchema),
        unavailable: z
          .array(z.string())
          .optional()
          .describe('Server instances that did not answer; their sessions are missing from this list. Absent when all answered.'),
      })
      .strict(),
  })
  .strict();

export const EndSessionResponse = z.object({ success: z.literal(true) }).strict();

export const ExtractRequest = ExtractOptions.extend({
  streamResponse: z.boolean().optional().describe('Stream progress as Server-Sent Events.'),
});

export const ExtractResponse = z
  .object({
    success: z.literal(true),
    data: z
      .object({
        result: ExtractResult.describe(
          '{pageText} with no options, {extraction} for an instruction alone, else an object valid against the schema.',
        ),
        actionId: z.string(),
        usage: Usage.optional().describe('Absent when no model was called.'),
      })
      .strict(),
  })
  .strict();

export const AgentExecuteResponse = z
  .object({ success: z.literal(true), data: z.object({ result: AgentResult, actionId: z.string() }).strict() })
  .strict();

export const HealthResponse = z
  .object({
    success: z.literal(true),
    data: z
      .object({
        status: z.literal('ok'),
        version: z.string(),
        instanceId: z.string().optional().describe('This server instance (--instance-id); peers found through DNS learn ids here.'),
      })
      .strict(),
  })
  .strict();
