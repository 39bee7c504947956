import { z } from 'zod';
import { PageEventSchema } from '../page/events.js';

/** Most entries a session's action log keeps; older ones are dropped first. */
export const MAX_LOG_ENTRIES = 1_000;
/** Longest string kept in a logged argument (an upload's base64, a long schema): the rest is cut. */
const MAX_ARGUMENT_CHARS = 500;

export const ActionLogEntrySchema = z.object({
  actionId: z.string().describe('The id the call answered with (_meta.actionId, data.actionId, x-action-id); the trace group has it too.'),
  operation: z.string().describe('The tool name of the operation: navigate, extract, observe, act, screenshot, agent_execute.'),
  arguments: z.record(z.string(), z.unknown()).describe('As given, secrets masked (%name%, [password]), long strings cut.'),
  startedAt: z.string(),
  endedAt: z.string(),
  outcome: z.enum(['ok', 'error']),
  errorCode: z.string().optional().describe('The error code when outcome is error.'),
  pageEvents: z.array(PageEventSchema),
  url: z.string().describe('The page URL when the operation ended.'),
});
export type ActionLogEntry = z.infer<typeof ActionLogEntrySchema>;

/** What a session's operations were, newest last, bounded to MAX_LOG_ENTRIES. Kept for every session. */
export class ActionLog {
  private readonly entries: ActionLogEntry[] = [];
  private dropped = 0;

  add(entry: ActionLogEntry): void {
    this.entries.push({ ...entry, arguments: clip(entry.arguments) as Record<string, unknown> });
    if (this.entries.length > MAX_LOG_ENTRIES) {
      this.entries.shift();
      this.dropped++;
    }
  }

  /** The kept entries, oldest first, and how many older ones were dropped. */
  list(): { entries: ActionLogEntry[]; dropped: number } {
    return { entries: [...this.entries], dropped: this.dropped };
  }
}

function clip(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length > MAX_ARGUMENT_CHARS ? `${value.slice(0, MAX_ARGUMENT_CHARS)}… (${value.length} chars)` : value;
  if (Array.isArray(value)) return value.map(clip);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, clip(item)]));
  return value;
}
