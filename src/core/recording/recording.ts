import type { RecordOption } from './record-option.js';
import { ServiceError } from '../errors.js';
import { ActionLog, type ActionLogEntry } from './log.js';
import { SessionSecrets, withoutCredentials } from './secrets.js';
import { RunSteps } from './steps.js';
import type { TraceOptions, TraceRecorder } from './trace.js';

/** `true`: screenshots and DOM snapshots; each part defaults to on but video (docs/recording.md). */

/** The trace options `record` asks for, or undefined for no trace. */
export function traceOptions(record: RecordOption | undefined): TraceOptions | undefined {
  if (!record) return undefined;
  const given = record === true ? {} : record;
  return { screenshots: given.screenshots ?? true, snapshots: given.snapshots ?? true, video: given.video ?? false };
}

/** One operation as the log and the trace name it. */
export interface StepInfo {
  actionId: string;
  operation: string;
  arguments: Record<string, unknown>;
  /** `%name%` values the operation fills in: secrets from now on. */
  variables?: Record<string, string | { value: string }>;
}

/** What a session remembers of its operations: the action log (always), the secrets to mask, the trace (when recorded). */
export class SessionRecording {
  readonly log = new ActionLog();
  readonly secrets = new SessionSecrets();
  /** The navigations and actions that can be done again: the session's script and replay (docs/replay.md). */
  readonly steps = new RunSteps();
  trace: TraceRecorder | undefined;

  /**
   * Runs `work` as one step: a trace group named `<operation> <actionId>`, then a log entry, ok or with the error code.
   * Once a secret has been typed, the step ends with `page.picture()`, a masked screenshot the trace keeps as a frame
   * in place of the browser's own (trace.ts).
   */
  async step<T>(
    step: StepInfo,
    page: { url: () => string; events: () => ActionLogEntry['pageEvents']; picture?: () => Promise<unknown> },
    work: () => Promise<T>,
  ): Promise<T> {
    this.secrets.addVariables(step.variables);
    const startedAt = new Date().toISOString();
    const entry = (outcome: Pick<ActionLogEntry, 'outcome' | 'errorCode'>): ActionLogEntry => ({
      actionId: step.actionId,
      operation: step.operation,
      arguments: this.secrets.maskDeep(withoutCredentials(step.arguments)) as Record<string, unknown>,
      startedAt,
      endedAt: new Date().toISOString(),
      ...outcome,
      pageEvents: page.events(),
      url: this.secrets.mask(safeUrl(page.url)),
    });
    await this.trace?.group(`${step.operation} ${step.actionId}`);
    const outer = this.steps.actionId;
    this.steps.actionId = step.actionId;
    try {
      const result = await work();
      this.log.add(entry({ outcome: 'ok' }));
      return result;
    } catch (err) {
      this.log.add(entry({ outcome: 'error', errorCode: err instanceof ServiceError ? err.code : 'internal' }));
      throw err;
    } finally {
      this.steps.actionId = outer;
      if (page.picture && this.trace?.wantsFrames(this.secrets)) await page.picture().catch(() => undefined);
      await this.trace?.groupEnd();
    }
  }

  /** The trace so far, scrubbed; `recording_not_enabled` for a session started without `record`. */
  async traceZip(): Promise<Buffer> {
    if (!this.trace) throw notRecorded();
    return this.trace.export(this.secrets);
  }
}

export function notRecorded(): ServiceError {
  return new ServiceError(
    'recording_not_enabled',
    'This session is not recorded. Start a session with session_start {record: true} to get a trace; every session keeps its action log (the log operation).',
  );
}

function safeUrl(url: () => string): string {
  try {
    return url();
  } catch {
    return '';
  }
}
