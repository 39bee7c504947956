import { z } from 'zod';

/** Something a hostile or busy page did that the session handled by policy. */
export interface PageEvent {
  seq: number;
  type: 'dialog' | 'popup' | 'crash' | 'download' | 'unresponsive' | 'blocked';
  message: string;
  /** For `blocked`: how many requests were refused; for any other type, how many times the same event came in a row. */
  count?: number;
  url?: string;
  at: string;
}

export const PageEventSchema = z.object({
  seq: z.number(),
  type: z.enum(['dialog', 'popup', 'crash', 'download', 'unresponsive', 'blocked']),
  message: z.string(),
  count: z
    .number()
    .optional()
    .describe('For "blocked": how many requests were refused. For any other type: how many times the same event happened in a row.'),
  url: z.string().optional(),
  at: z.string(),
});

const MAX_EVENTS = 50;

/** A session's recent page events, numbered, with a cursor for the ones no operation has reported yet. */
export class EventLog {
  private readonly recent: PageEvent[] = [];
  private seq = 0;
  private reportedSeq = 0;
  /** The message of the last event as it was recorded, before a repeat count was added to it. */
  private lastMessage = '';

  /** `mask` hides the session's secrets in an event's message and URL (a popup opened with a typed password in it). */
  constructor(private readonly mask: (text: string) => string = (text) => text) {}

  /** The kept events, oldest first (at most MAX_EVENTS). */
  get all(): readonly PageEvent[] {
    return this.recent;
  }

  get lastSeq(): number {
    return this.seq;
  }

  /** The last event an operation has reported; later ones are still to be reported. */
  get reportedUpTo(): number {
    return this.reportedSeq;
  }

  /**
   * Adds an event. The same event again (type, message and URL) while the last one is unreported only counts up the
   * last one: a page that asks the same dialog in a loop would otherwise push every other event out of the kept 50,
   * the one saying the page was replaced among them.
   */
  record(event: Omit<PageEvent, 'seq' | 'at'>): void {
    const masked = { ...event, message: this.mask(event.message), ...(event.url === undefined ? {} : { url: this.mask(event.url) }) };
    const last = this.recent[this.recent.length - 1];
    const repeat =
      last !== undefined &&
      last.seq > this.reportedSeq &&
      masked.type !== 'blocked' &&
      last.type === masked.type &&
      last.url === masked.url &&
      this.lastMessage === masked.message;
    if (repeat) {
      last.count = (last.count ?? 1) + 1;
      last.message = `${masked.message} (${last.count} times)`;
      last.at = new Date().toISOString();
      return;
    }
    this.lastMessage = masked.message;
    this.recent.push({ ...masked, seq: ++this.seq, at: new Date().toISOString() });
    if (this.recent.length > MAX_EVENTS) this.recent.shift();
  }

  /** Events recorded after `seq`, for reporting what happened during one operation. */
  since(seq: number): PageEvent[] {
    return this.recent.filter((event) => event.seq > seq);
  }

  /** Events no operation has reported yet; a popup, for one, surfaces only after the page that opened it has loaded. */
  takeUnreported(): PageEvent[] {
    const events = this.since(this.reportedSeq);
    this.reportedSeq = this.seq;
    return events;
  }
}
