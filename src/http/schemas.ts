import { z } from 'zod';
import { ActRequest, ActResult, MAX_ACT_INPUT_BYTES, ObserveRequest, ObserveResult, ScreenshotRequest } from '../core/act/index.js';
import { AgentResult } from '../core/agent/schema.js';
import { ExtractOptions, ExtractResult } from '../core/extract.js';
import { Usage } from '../core/usage.js';
import { SessionInfoSchema } from '../core/sessions.js';
import { MAX_STORAGE_STATE_BYTES, ProfileInfo, ProfileList, ProfileName, SessionStart, StorageState } from '../core/state/index.js';

/** The REST envelopes around the core's schemas; the core's request schemas are used as they are. */

export const StartSessionRequest = SessionStart.describe('Start options; send an empty object or no body for none.');

/** session_start reads bodies big enough for the largest storage state. */
export const MAX_START_BODY_BYTES = MAX_STORAGE_STATE_BYTES + 64 * 1024;

export const StateResponse = operationResponse(StorageState);
export const SaveProfileResponse = operationResponse(ProfileInfo);
export const ProfileListResponse = z.object({ success: z.literal(true), data: ProfileList }).strict();
export const DeleteProfileRequest = z.object({ name: ProfileName }).strict();

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

/** One browser host in the readiness answer: its public name (no credentials) and whether it can take a session. */
const HostReadinessSchema = z
  .object({
    name: z.string().describe('"local", or the host endpoint without userinfo, query string or fragment.'),
    state: z.enum(['up', 'down', 'idle']).describe('idle: not connected yet (hosts connect at their first session or readiness check).'),
    sessions: z.number().int(),
    capacityLeft: z.number().int().nullable().describe('Room under --sessions-per-host; null when unlimited.'),
    accepting: z.boolean().describe('Whether a new session could be placed on this host now.'),
  })
  .strict();

/** The readiness data: the 200 answer's `data`, and the 503 answer's `error.details` (with status "unavailable"). */
export const Readiness = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    version: z.string(),
    instanceId: z.string().optional().describe('This server instance (--instance-id); peers found through DNS learn ids here.'),
    hosts: z.array(HostReadinessSchema),
    capacityLeft: z.number().int().describe('New sessions this instance can take now (accepting hosts, bounded by --max-sessions).'),
  })
  .strict();

export const HealthResponse = z
  .object({
    success: z.literal(true),
    data: Readiness.describe(
      'status is "ok" here; when no session can start the answer is 503 browser_unavailable with this in error.details.',
    ),
  })
  .strict();

const streamResponse = z.boolean().optional().describe('Stream progress as Server-Sent Events.');

export const ActBody = ActRequest.extend({ streamResponse });
export const ObserveBody = ObserveRequest.extend({ streamResponse });

/** The act route reads bodies big enough for the largest upload the core takes (base64 is 4/3 of the bytes). */
export const MAX_ACT_BODY_BYTES = MAX_ACT_INPUT_BYTES;

/** `{success, data: {result, actionId, usage?}}` around an operation's result. */
function operationResponse<T extends z.ZodType>(result: T) {
  return z
    .object({
      success: z.literal(true),
      data: z.object({ result, actionId: z.string(), usage: Usage.optional().describe('Absent when no model was called.') }).strict(),
    })
    .strict();
}

export const ActResponse = operationResponse(ActResult);
export const ObserveResponse = operationResponse(ObserveResult);
export { ScreenshotRequest };
