import type { Logger } from 'pino';
import type { ActionLogEntry } from './log.js';
import type { SessionRecording } from './recording.js';

interface Kept {
  owner: string;
  recording: SessionRecording;
  timer: NodeJS.Timeout;
}

/**
 * Recordings of ended sessions, kept for --recording-retention (default 0: gone when the session ends). The trace is
 * finished at the end and its chunks stay on disk until the retention is over.
 */
export class RetainedRecordings {
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly retentionMs: number,
    private readonly logger: Logger,
  ) {}

  /** Called as a session ends, before its context closes. */
  async sessionEnding(id: string, owner: string, recording: SessionRecording): Promise<void> {
    const trace = recording.trace;
    if (this.retentionMs <= 0) {
      await trace?.discard();
      return;
    }
    // The last chunk is saved while the context is still open.
    await trace?.finish(recording.secrets).catch((err: unknown) => this.logger.warn({ err, session: id }, 'finishing the trace failed'));
    const timer = setTimeout(() => void this.drop(id), this.retentionMs);
    timer.unref();
    this.kept.set(id, { owner, recording, timer });
  }

  /** The ended session's recording if `owner` may see it and it is still kept. */
  get(id: string, owner: string): SessionRecording | undefined {
    const kept = this.kept.get(id);
    return kept && kept.owner === owner ? kept.recording : undefined;
  }

  log(id: string, owner: string): { entries: ActionLogEntry[]; dropped: number } | undefined {
    return this.get(id, owner)?.log.list();
  }

  private async drop(id: string): Promise<void> {
    const kept = this.kept.get(id);
    if (!kept) return;
    this.kept.delete(id);
    clearTimeout(kept.timer);
    await kept.recording.trace?.discard();
  }

  async close(): Promise<void> {
    await Promise.all([...this.kept.keys()].map((id) => this.drop(id)));
  }
}
