import { ACT_METHODS } from '../act/index.js';
import { runAgent } from '../agent/loop.js';
import type { AgentAction, AgentCache, AgentConfig, AgentExecuteOptions, AgentResult } from '../agent/schema.js';
import type { OperationContext } from '../operation.js';
import type { BrowserService, Produced } from '../service.js';
import type { Session } from '../sessions.js';
import { UsageTotal } from '../usage.js';
import { Variables } from '../variables.js';
import { replaySteps, stepWords, type ReplayOutcome } from './replay.js';
import { cacheIdOf, StoredRun } from './run.js';

/** The agent's tools whose effect a replay repeats: act's methods (one or several in a call), goto, and those that change nothing. */
const REPLAYABLE = new Set<string>([...ACT_METHODS, 'act', 'goto', 'screenshot', 'done']);

export interface AgentExecution {
  session: Session;
  config: AgentConfig;
  options: AgentExecuteOptions;
  service: BrowserService;
  owner: string;
  ctx: OperationContext;
}

/**
 * agent_execute: the agent's run, or with `cache`/`cacheKey` a kept run of the same task done again without the model
 * (docs/replay.md). A step whose target is gone is healed by one model call; one that cannot be healed hands the task
 * to the model from the page as the replay left it. A fresh run that succeeded with replayable tools is kept. `usage`
 * counts only the model calls made.
 */
export async function executeAgent(run: AgentExecution): Promise<Produced<AgentResult>> {
  const { session, options, service, owner } = run;
  if (!options.cache && options.cacheKey === undefined) return { result: await agent(run) };
  const started = performance.now();
  const variables = new Variables(options.variables);
  const mask = (text: string) => session.recording.secrets.mask(variables.redact(text));
  const id = cacheIdOf(owner, {
    cacheKey: options.cacheKey,
    instruction: options.instruction,
    startUrl: mask(session.page.url()),
    variables: variables.names,
  });
  const mark = session.recording.steps.mark();
  const kept = StoredRun.safeParse(await service.runs.get(owner, id));
  let replayed: ReplayOutcome | undefined;
  if (kept.success && kept.data.answer) {
    replayed = await replaySteps(session, kept.data, {
      variables,
      heal: true,
      model: { modelName: run.config.model, modelClientOptions: run.config.options, defaults: service.config },
      policy: service.config,
      ctx: run.ctx,
    });
    if (replayed.success) {
      if (replayed.healed.length) await service.runs.put(owner, id, replayed.run);
      return { result: fromReplay(kept.data.answer, replayed, started) };
    }
  }
  // A fresh run, or the rest of one whose replay stopped: the model goes on from the page as it is.
  const fresh = await agent(replayed ? { ...run, options: { ...options, context: doneSoFar(options.context, replayed) } } : run);
  const replayedActions = replayed ? replayedSteps(replayed) : [];
  const steps = session.recording.steps.since(mark);
  const reason = notReplayable(fresh) ?? (steps ? undefined : 'the run was longer than a session keeps (1,000 steps)');
  if (!reason && steps) {
    await service.runs.put(owner, id, {
      steps,
      instruction: mask(options.instruction),
      answer: { success: fresh.success, message: mask(fresh.message) },
    } satisfies StoredRun);
  }
  const cache: AgentCache = {
    hit: Boolean(replayed),
    replayed: replayed?.replayed ?? 0,
    healed: replayed?.healed.length ?? 0,
    inferred: fresh.actions.length,
    stored: !reason,
    ...(reason ? { reason } : {}),
  };
  const usage = new UsageTotal(fresh.usage);
  if (replayed?.usage) usage.add(replayed.usage);
  return { result: { ...fresh, actions: [...replayedActions, ...fresh.actions], usage: usage.total, cache } };
}

function agent({ session, config, options, service, ctx }: AgentExecution): Promise<AgentResult> {
  return runAgent({ session, config, options, deps: { config: service.config, live: service.live }, ctx });
}

/** Why a run is not kept: it failed, or a tool it used needs the model (extract) or a person (ask_human) each time. */
function notReplayable(result: AgentResult): string | undefined {
  if (!result.completed || !result.success) return 'the run did not succeed';
  const other = result.actions.find((action) => !REPLAYABLE.has(action.type));
  return other ? `the run used ${other.type}, which a replay cannot repeat without a model or a person` : undefined;
}

/** The agent's result for a run done again from the cache: its first answer, and the steps as actions. */
function fromReplay(answer: NonNullable<StoredRun['answer']>, replayed: ReplayOutcome, started: number): AgentResult {
  return {
    success: answer.success,
    message: answer.message,
    actions: replayedSteps(replayed),
    completed: true,
    metadata: {
      url: replayed.url,
      title: replayed.title,
      stopReason: 'done',
      actionCount: replayed.run.steps.length,
      durationMs: Math.round(performance.now() - started),
    },
    usage: new UsageTotal(replayed.usage).total,
    cache: { hit: true, replayed: replayed.replayed, healed: replayed.healed.length, inferred: 0, stored: true },
  };
}

/** The steps a replay did, as the agent's actions: what each did, the healed ones saying so. */
function replayedSteps(replayed: ReplayOutcome): AgentAction[] {
  const done = replayed.failed ? replayed.run.steps.slice(0, replayed.failed.step - 1) : replayed.run.steps;
  const healed = new Set(replayed.healed.map((heal) => heal.step));
  return done.map((step, i) => ({
    type: step.method,
    ...(step.arguments ? { arguments: step.arguments } : step.url ? { arguments: { url: step.url } } : {}),
    message: `${healed.has(i + 1) ? 'Healed and done' : 'Replayed'}: ${stepWords(step)}.`,
  }));
}

/** The context a model gets for the rest of a run whose replay stopped: what was done, and where it stopped. */
function doneSoFar(context: string | undefined, replayed: ReplayOutcome): string {
  const done = replayedSteps(replayed).map((action, i) => `${i + 1}. ${action.message}`);
  const failed = replayed.failed!;
  return [
    ...(context ? [context] : []),
    `Part of this task was already done by replaying an earlier run; the page is as those steps left it:`,
    ...done,
    `Step ${failed.step}, ${failed.expected}, could not be repeated (${failed.message}). Go on from here.`,
  ].join('\n');
}
