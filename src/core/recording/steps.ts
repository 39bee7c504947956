import { z } from 'zod';
import type { SessionSecrets } from './secrets.js';

/** Most steps a session's run keeps; older ones are dropped first (as the action log drops its entries). */
export const MAX_RUN_STEPS = 1_000;
/** Longest URL a step keeps, and longest selector (act's own bound): a longer locator is no target worth replaying. */
export const MAX_STEP_URL = 8_192;
export const MAX_STEP_SELECTOR = 2_000;
/** Most bytes (as JSON) a session's run keeps: a fill takes up to 100,000 characters, and the run is kept whole. */
export const MAX_RUN_BYTES = 4 * 1024 * 1024;

/**
 * One navigation or action of a run, as it can be done again without a model (docs/replay.md): a goto and its URL, or
 * act's method with its target as Playwright's codegen would write it. Values are never kept: arguments hold the
 * `%name%` placeholders the call used, and a password typed without one is `%password%`.
 */
export const RunStep = z
  .object({
    method: z.string().min(1).max(40).describe("act's method (click, fill, press, ...), or goto."),
    url: z.string().max(MAX_STEP_URL).optional().describe('goto: the URL opened, variables as %name%.'),
    target: z
      .object({
        selector: z
          .string()
          .min(1)
          .max(MAX_STEP_SELECTOR)
          .describe("Playwright's selector of the element, as codegen prefers them (role and name, label, placeholder, text, test id)."),
        description: z
          .string()
          .max(500)
          .optional()
          .describe('The element as the page text named it: `button "Sign in"` (a step written by hand may leave it out).'),
      })
      .strict()
      .optional()
      .describe('The element acted on; absent for actions on the page (press without a target, wait, back) and for points.'),
    x: z.number().optional().describe('A point the action was given, viewport CSS px.'),
    y: z.number().optional(),
    arguments: z.record(z.string(), z.unknown()).optional().describe("act's arguments, variables as %name%."),
    waitFor: z
      .enum(['load', 'networkidle'])
      .optional()
      .describe('What act waited for after it: a new document loading, or requests the action started.'),
    instruction: z.string().max(2_000).optional().describe('The instruction a model chose this action for (act or agent_execute).'),
    actionId: z.string().max(100).optional().describe('The operation that did it (the action log).'),
  })
  .strict();
export type RunStep = z.infer<typeof RunStep>;

/** How a step's element is named in messages: its description, or its selector for a step written without one. */
export function targetWords(target: NonNullable<RunStep['target']>): string {
  return target.description || target.selector;
}

/** What a password typed without a variable is in a session's run: a placeholder its script reads from PASSWORD. */
export const PASSWORD_PLACEHOLDER = '%password%';
const PASSWORD_LABEL = '[password]';

/**
 * Text as a run keeps it: every secret the session has seen as its placeholder, a password typed without a variable as
 * %password% (in a URL too, where the mask writes its label encoded), so a replay or a script can ask for it.
 */
export function runText(secrets: SessionSecrets, text: string): string {
  return secrets
    .mask(text)
    .replaceAll(PASSWORD_LABEL, PASSWORD_PLACEHOLDER)
    .replaceAll(encodeURIComponent(PASSWORD_LABEL), PASSWORD_PLACEHOLDER);
}

/** The steps a session has done that can be done again, newest last, bounded to MAX_RUN_STEPS and MAX_RUN_BYTES. */
export class RunSteps {
  private readonly steps: RunStep[] = [];
  /** Each kept step's size as JSON, in the same order. */
  private readonly sizes: number[] = [];
  private bytes = 0;
  private added = 0;
  /** The operation now running (set by SessionRecording.step), stamped on the steps it adds. */
  actionId: string | undefined;
  /** The instruction a model is following now (agent_execute), stamped on the steps it adds. */
  instruction: string | undefined;

  add(step: RunStep): void {
    const stamped: RunStep = {
      ...step,
      ...(this.actionId && !step.actionId ? { actionId: this.actionId } : {}),
      ...(this.instruction && !step.instruction ? { instruction: this.instruction } : {}),
    };
    const size = JSON.stringify(stamped).length;
    this.steps.push(stamped);
    this.sizes.push(size);
    this.bytes += size;
    this.added++;
    while (this.steps.length > MAX_RUN_STEPS || (this.bytes > MAX_RUN_BYTES && this.steps.length > 1)) {
      this.steps.shift();
      this.bytes -= this.sizes.shift()!;
    }
  }

  /** A point to collect the steps added after it (`since`). */
  mark(): number {
    return this.added;
  }

  /** The steps added after `mark`, oldest first; undefined when some of them were let go for the bounds. */
  since(mark: number): RunStep[] | undefined {
    const kept = this.added - this.steps.length;
    return mark < kept ? undefined : this.steps.slice(mark - kept);
  }

  /** The kept steps, or those of one operation. */
  list(actionId?: string): RunStep[] {
    return actionId === undefined ? [...this.steps] : this.steps.filter((step) => step.actionId === actionId);
  }

  /** Steps dropped for the bound. */
  get dropped(): number {
    return this.added - this.steps.length;
  }
}
