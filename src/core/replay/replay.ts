import { z } from 'zod';
import { Action, checkSelector, inferAction, performAndSettle } from '../act/index.js';
import { isServiceError, ServiceError, throwIfAborted } from '../errors.js';
import { createModelClient, type ModelDefaults } from '../llm/index.js';
import type { LLMClient } from '../llm/types.js';
import { DEFAULTS } from '../config.js';
import { navigate, type NavigatePolicy } from '../navigate.js';
import type { OperationContext } from '../operation.js';
import { MAX_RUN_STEPS, RunStep, targetWords } from '../recording/index.js';
import type { BrowserService, Produced } from '../service.js';
import type { Session } from '../sessions.js';
import { takeSnapshot } from '../snapshot/index.js';
import { parseInput } from '../validation.js';
import { UsageTotal, type Usage } from '../usage.js';
import { Variables, VariableValue } from '../variables.js';
import { runNotFound, StoredRun } from './run.js';

/** How long a step waits for its target to show before it counts as gone (the page settled after the step before). */
const FIND_MS = 1_500;
/** Most characters of the page text a stopped replay shows. */
const SHOWN_PAGE_CHARS = 3_000;

export const ReplayRequest = z
  .object({
    runId: z.string().min(1).max(100).optional().describe("session_script's runId."),
    steps: z
      .array(RunStep)
      .min(1)
      .max(MAX_RUN_STEPS)
      .optional()
      .describe("session_script's json steps: {method, url? (goto), target?: {selector}, arguments?}."),
    actionId: z.string().min(1).max(100).optional().describe('An earlier agent_execute here.'),
    variables: z
      .record(z.string().regex(/^[A-Za-z0-9_]+$/), VariableValue)
      .optional()
      .describe("Values of the run's %name% (a password typed without one is %password%)."),
    heal: z.boolean().optional().describe('Default true.'),
    modelName: z.string().optional().describe("The healing model (default the server's)."),
    modelClientOptions: z.record(z.string(), z.unknown()).optional(),
    timeoutMs: z.number().int().min(1).max(60_000).optional().describe("Longest wait for each step's element to be actionable, ms."),
  })
  .strict();
export type ReplayRequest = z.infer<typeof ReplayRequest>;

const StepTarget = RunStep.shape.target.unwrap();

export const ReplayResult = z.object({
  success: z.boolean(),
  steps: z.number().int().describe('Steps in the run.'),
  replayed: z.number().int().describe('Steps done as recorded.'),
  healed: z
    .array(z.object({ step: z.number().int(), was: StepTarget, now: StepTarget }))
    .describe('Steps whose target a model found again (1-based); the kept run now has the new target.'),
  failed: z
    .object({
      step: z.number().int().describe('1-based.'),
      method: z.string(),
      expected: z.string().describe('What the step looked for.'),
      code: z.string(),
      message: z.string(),
      url: z.string(),
      title: z.string(),
      pageText: z.string().describe('What the page shows instead (its text, cut).'),
    })
    .optional()
    .describe('The step the replay stopped at.'),
  runId: z.string().optional().describe('The kept run, updated with healed targets.'),
  url: z.string(),
  title: z.string(),
});
export type ReplayResult = z.infer<typeof ReplayResult>;

export interface ReplayCall {
  service: BrowserService;
  owner: string;
  ctx: OperationContext;
}

/** The replay operation: finds the run, does it again, keeps a healed run. */
export async function replay(session: Session, input: ReplayRequest, call: ReplayCall): Promise<Produced<ReplayResult>> {
  const given = [input.runId, input.steps, input.actionId].filter((source) => source !== undefined).length;
  if (given !== 1) throw new ServiceError('invalid_argument', 'Give exactly one of runId, steps or actionId.');
  const run = await findRun(session, input, call);
  const outcome = await replaySteps(session, run, {
    variables: new Variables(input.variables),
    heal: input.heal ?? true,
    model: { modelName: input.modelName, modelClientOptions: input.modelClientOptions, defaults: call.service.config },
    timeoutMs: input.timeoutMs,
    policy: call.service.config,
    ctx: call.ctx,
  });
  if (input.runId && outcome.healed.length) await call.service.runs.put(call.owner, input.runId, outcome.run);
  const { run: _run, usage, ...result } = outcome;
  return {
    result: { ...result, ...(input.runId ? { runId: input.runId } : {}) },
    ...(usage ? { usage } : {}),
  };
}

async function findRun(session: Session, input: ReplayRequest, { service, owner }: ReplayCall): Promise<StoredRun> {
  if (input.steps) return { steps: input.steps };
  if (input.actionId) {
    const steps = session.recording.steps.list(input.actionId);
    if (!steps.length) throw runNotFound(input.actionId);
    return { steps, ...(steps[0]!.instruction ? { instruction: steps[0]!.instruction } : {}) };
  }
  const kept = StoredRun.safeParse(await service.runs.get(owner, input.runId!));
  if (!kept.success) throw runNotFound(input.runId!);
  return kept.data;
}

export interface ReplayOptions {
  variables: Variables;
  /** Heal a gone target with the model (when one can be made). */
  heal: boolean;
  model: { modelName?: string; modelClientOptions?: Record<string, unknown>; defaults: ModelDefaults };
  timeoutMs?: number;
  policy: NavigatePolicy;
  ctx: OperationContext;
}

/** What a replay did, the run as it stands now (healed targets in), and the model's usage when it healed. */
export type ReplayOutcome = Omit<ReplayResult, 'runId'> & { run: StoredRun; usage?: Usage };

/**
 * Does a run's steps again in order, without a model: each goto opens its URL, each action finds its target by its
 * locator and is performed and settled as act does it. A target that is gone or ambiguous is healed by one model call
 * (act by instruction, from the step's description and the run's instruction) when `heal` and a model allow; otherwise
 * the replay stops there and says what it expected and what the page shows.
 */
export async function replaySteps(session: Session, run: StoredRun, options: ReplayOptions): Promise<ReplayOutcome> {
  const { variables, ctx } = options;
  // A run may come from the caller: every step is checked as act checks an action, before the first runs.
  run.steps.forEach(checkStep);
  checkVariables(run.steps, variables);
  const steps = [...run.steps];
  const healed: ReplayResult['healed'] = [];
  const usage = new UsageTotal();
  // Made at the first heal: a replay that heals nothing needs no model configured.
  let llm: LLMClient | undefined;
  let replayed = 0;
  let asked = false;
  let failed: ReplayResult['failed'];
  for (const [i, step] of steps.entries()) {
    throwIfAborted(ctx.signal);
    ctx.progress?.({ message: `step ${i + 1} of ${steps.length}: ${stepWords(step)}`, data: { stage: 'step', step: i + 1 } });
    try {
      if (step.method === 'goto') await goto(session, step, options);
      else {
        const found = (await shows(session, step, options.timeoutMs)) ? await tried(session, step, options) : 'gone';
        if (found !== 'done') {
          if (!options.heal) throw targetError(step, found);
          llm ??= healingModel(options, step, found);
          asked = true;
          const now = await heal(session, step, { run, llm, usage, options });
          healed.push({ step: i + 1, was: step.target!, now });
          steps[i] = { ...step, target: now };
          continue;
        }
      }
      replayed++;
    } catch (err) {
      if (ctx.signal?.aborted || !isServiceError(err)) throw err;
      failed = {
        step: i + 1,
        method: step.method,
        expected: stepWords(step),
        code: err.code,
        message: err.message,
        ...(await shown(session, variables)),
      };
      break;
    }
  }
  const where = await shown(session, variables, 0);
  return {
    success: !failed,
    steps: steps.length,
    replayed,
    healed,
    ...(failed ? { failed } : {}),
    url: where.url,
    title: where.title,
    run: { ...run, steps },
    // Only the model calls made: none when nothing was healed.
    ...(asked ? { usage: usage.total } : {}),
  };
}

/** A step replay can do: a goto with its URL, or an action act would take (its selectors' engines included). */
function checkStep(step: RunStep, index: number): void {
  const where = `steps.${index}`;
  if (step.method === 'goto') {
    if (!step.url) throw new ServiceError('invalid_argument', `${where}: a goto step needs its url.`);
    return;
  }
  parseInput(Action, toAction(step), where);
  const selectors = [step.target?.selector, step.arguments?.targetSelector].filter((selector) => typeof selector === 'string');
  for (const selector of selectors) {
    try {
      checkSelector(selector);
    } catch (err) {
      if (!isServiceError(err)) throw err;
      throw new ServiceError(err.code, `${where}: ${err.message}`, { cause: err });
    }
  }
}

/** Every %name% the run needs is given, or `invalid_argument` naming those missing, before any step runs. */
function checkVariables(steps: RunStep[], variables: Variables): void {
  const needed = new Set<string>();
  for (const step of steps)
    for (const match of JSON.stringify([step.url, step.arguments]).matchAll(/%([A-Za-z0-9_]+)%/g)) needed.add(match[1]!);
  const missing = [...needed].filter((name) => !variables.names.includes(name));
  if (missing.length)
    throw new ServiceError(
      'invalid_argument',
      `The run needs the variables ${missing.join(', ')}: pass their values in variables (a password typed without a variable is %password%).`,
      { details: { missing } },
    );
}

async function goto(session: Session, step: RunStep, options: ReplayOptions): Promise<void> {
  const given = step.url!;
  const url = options.variables.substitute(given);
  if (options.variables.usedIn(given)) {
    options.variables.checkOrigins(given, [url]);
    session.recording.secrets.typed();
  }
  await navigate(session, { url, options: { timeout: DEFAULTS.navigationTimeoutMs } }, options.policy, { signal: options.ctx.signal });
}

/** Whether the step's target shows on the page (or it has none): waits up to FIND_MS for it, as the page may still be drawing it. */
async function shows(session: Session, step: RunStep, timeoutMs: number | undefined): Promise<boolean> {
  if (!step.target) return true;
  return session.page
    .locator(step.target.selector)
    .filter({ visible: true })
    .first()
    .waitFor({ state: 'visible', timeout: Math.min(timeoutMs ?? FIND_MS, FIND_MS) })
    .then(
      () => true,
      () => false,
    );
}

/** The step done on its recorded target, or why the target did not do: gone, or matching several elements now. */
async function tried(session: Session, step: RunStep, options: ReplayOptions): Promise<'done' | 'gone' | 'ambiguous'> {
  try {
    await perform(session, toAction(step), step, options);
    return 'done';
  } catch (err) {
    if (!step.target || !isServiceError(err)) throw err;
    if (err.code === 'selector_ambiguous') return 'ambiguous';
    if (err.code === 'selector_not_found') return 'gone';
    throw err;
  }
}

function toAction(step: RunStep): Action {
  return {
    method: step.method as Action['method'],
    ...(step.target ? { selector: step.target.selector } : {}),
    ...(step.x !== undefined && step.y !== undefined ? { x: step.x, y: step.y } : {}),
    ...(step.arguments ? { arguments: step.arguments } : {}),
  };
}

async function perform(session: Session, action: Action, step: RunStep, options: ReplayOptions) {
  return performAndSettle(session, action, {
    // Found by its recorded locator: kept as it is, not described again.
    ...(action.selector && step.target ? { target: step.target } : {}),
    variables: options.variables,
    timeoutMs: options.timeoutMs,
    policy: options.policy,
    signal: options.ctx.signal,
    ...(step.instruction ? { instruction: step.instruction } : {}),
  });
}

/** The model that heals, or the error that stops the replay at this step when none can be made. */
function healingModel(options: ReplayOptions, step: RunStep, found: 'gone' | 'ambiguous'): LLMClient {
  try {
    return createModelClient(options.model.modelName, options.model.modelClientOptions, {
      ...options.model.defaults,
      fallback: options.ctx.modelFallback,
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const stopped = targetError(step, found);
    throw new ServiceError(stopped.code, `${stopped.message} No model to heal it: ${why}`, { cause: err });
  }
}

/** One model call finds the step's element on the page as it is; the step is done on it and keeps its new target. */
async function heal(
  session: Session,
  step: RunStep,
  { run, llm, usage, options }: { run: StoredRun; llm: LLMClient; usage: UsageTotal; options: ReplayOptions },
): Promise<NonNullable<RunStep['target']>> {
  const snapshot = await takeSnapshot(session, { iframes: true }, { signal: options.ctx.signal });
  const purpose = step.instruction ?? run.instruction;
  const instruction = `${stepWords(step)}${purpose ? ` (a step of: ${purpose})` : ''}. The element was ${targetWords(step.target!)}; find it as the page is now.`;
  const inferred = await inferAction(llm, { instruction, snapshot, variables: options.variables, signal: options.ctx.signal }, usage);
  if (!inferred.ref) throw targetError(step, 'gone');
  // The model finds the element; the step keeps its own method and arguments.
  const { performed } = await perform(session, { ...toAction(step), selector: undefined, ref: inferred.ref }, step, options);
  if (!performed.target)
    throw new ServiceError(
      'selector_not_found',
      `The healed step ${stepWords(step)} was done, but no locator could be made for its element.`,
    );
  return { ...performed.target, description: performed.description };
}

function targetError(step: RunStep, found: 'gone' | 'ambiguous'): ServiceError {
  const target = step.target!;
  return found === 'gone'
    ? new ServiceError('selector_not_found', `The step's element, ${targetWords(target)}, is not on the page (${target.selector}).`)
    : new ServiceError(
        'selector_ambiguous',
        `The step's element, ${targetWords(target)}, matches several elements now (${target.selector}).`,
      );
}

/** A step in a few words: `click button "Save"`, `goto https://...`. */
export function stepWords(step: RunStep): string {
  if (step.method === 'goto') return `goto ${step.url ?? ''}`;
  const args = step.arguments && Object.keys(step.arguments).length ? ` ${JSON.stringify(step.arguments)}` : '';
  const target = step.target ? ` ${targetWords(step.target)}` : step.x !== undefined ? ` at (${step.x}, ${step.y})` : '';
  return `${step.method}${target}${args}`;
}

/** Where the page is and what it shows (cut to `chars`), secrets masked. */
async function shown(
  session: Session,
  variables: Variables,
  chars = SHOWN_PAGE_CHARS,
): Promise<{ url: string; title: string; pageText: string }> {
  const mask = (text: string) => session.recording.secrets.mask(variables.redact(text));
  if (!chars) return { url: mask(session.page.url()), title: mask(await session.page.title().catch(() => '')), pageText: '' };
  const snapshot = await takeSnapshot(session, { iframes: true, domSettleTimeoutMs: 0 }).catch(() => undefined);
  const text = snapshot ? mask(snapshot.text) : '(the page could not be read)';
  return {
    url: mask(session.page.url()),
    title: mask(snapshot?.title ?? ''),
    pageText: text.length > chars ? `${text.slice(0, chars)}…` : text,
  };
}

/** The result for a model: how far the replay got, what it healed, and where it stopped. */
export function replayResultText(result: ReplayResult): string {
  const lines = [
    `${result.success ? 'Replayed' : 'Stopped'}: ${result.replayed} of ${result.steps} steps as recorded${result.healed.length ? `, ${result.healed.length} healed` : ''}.`,
    ...result.healed.map((heal) => `Healed step ${heal.step}: ${targetWords(heal.was)} is now ${targetWords(heal.now)}.`),
  ];
  if (result.failed)
    lines.push(
      `Step ${result.failed.step} (${result.failed.expected}) failed: ${result.failed.code}: ${result.failed.message}`,
      `The page: ${result.failed.title ? `${JSON.stringify(result.failed.title)} ` : ''}${result.failed.url}`,
      result.failed.pageText,
    );
  else lines.push(`Ended on: ${result.title ? `${JSON.stringify(result.title)} ` : ''}${result.url}`);
  return lines.join('\n');
}
