import { z } from 'zod';

/** The REST door's own schemas: readiness. The operations' bodies and answers come from the operation table. */

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
