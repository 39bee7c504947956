import { screenshot as takeScreenshot } from '../act/index.js';
import { LOW_DETAIL_SIDE } from '../llm/images.js';
import type { ServiceConfig } from '../config.js';
import { cancelledError, isAbortError, ServiceError, throwIfAborted } from '../errors.js';
import { UsageTotal, type Usage } from '../usage.js';
import { createModelClient, DEFAULT_MODELS, parseModelName } from '../llm/index.js';
import type { ChatResponse, LLMClient, ToolCall } from '../llm/types.js';
import { type OperationContext } from '../operation.js';
import { sleep, withTimeout } from '../time.js';
import type { Session } from '../sessions.js';
import { takeSnapshot } from '../snapshot/index.js';
import { ACT_TOOL } from './act-tools.js';
import { Integrations } from './integrations.js';
import { History, systemPrompt, taskMessage, type PageState } from './prompt.js';
import type { AgentAction, AgentConfig, AgentExecuteOptions, AgentResult } from './schema.js';
import { rawArguments, Toolbox } from './toolbox.js';
import { askHuman } from './ask-human.js';
import type { LiveViews } from '../live/index.js';
import { describeToolError, type HumanHelp, type ToolEnv, type ToolOutcome } from './tools.js';
import { Variables } from '../variables.js';

export const AGENT_DEFAULTS = { maxSteps: 20, autoScreenshot: true, waitBetweenActions: 0 } as const;

/** Longest wait for the DOM to settle before reading the page each step. */
const STEP_DOM_SETTLE_MS = 2_000;
const MAX_OUTPUT_TOKENS = 4_096;

export interface AgentDeps {
  /** The server's defaults: model, environment (API keys), URL policy. */
  config: Pick<ServiceConfig, 'model' | 'env' | 'allowFileUrls' | 'egress' | 'liveView'>;
  /** Live views, for ask_human. */
  live?: LiveViews;
  /** A ready model client (tests, benchmarks); otherwise one is built from AgentConfig. */
  llm?: LLMClient;
}

interface StepTiming {
  step: number;
  observeMs: number;
  modelMs: number;
  actionsMs: number;
}

type StopReason = 'done' | 'max_steps' | 'ask_human';

/** What runAgent is given: the session, the agent's config and task, the service's dependencies, the door's context. */
export interface AgentRequest {
  session: Session;
  config: AgentConfig;
  options: AgentExecuteOptions;
  deps: AgentDeps;
  ctx?: OperationContext;
}

/** Runs the agent on a session until it calls done, spends maxSteps, is cancelled, or its model fails. */
export async function runAgent({ session, config, options, deps, ctx = {} }: AgentRequest): Promise<AgentResult> {
  const started = performance.now();
  const signal = ctx.signal ?? new AbortController().signal;
  Toolbox.checkCustomTools(config.tools);
  const wanted = modelName(config, deps.config.model);
  const llm =
    deps.llm ??
    createModelClient(wanted, config.options, {
      model: deps.config.model,
      env: deps.config.env,
      provider: config.provider,
      fallback: ctx.modelFallback,
      egress: deps.config.egress,
    });
  const integrations = await Integrations.connect(config.integrations, Toolbox.reservedNames(config.tools), {
    signal,
    egress: deps.config.egress,
  });
  // The steps it does carry its task into the session's run: healing a replayed step reads it (docs/replay.md).
  const steps = session.recording.steps;
  const outer = steps.instruction;
  steps.instruction = new Variables(options.variables).redact(options.instruction);
  try {
    throwIfAborted(signal);
    return await loop({ session, config, options, deps, ctx, signal, llm, integrations, started, wanted });
  } finally {
    steps.instruction = outer;
    await integrations.close();
  }
}

/** An explicit provider without a model means that provider's default, unless the server default is of that provider. */
function modelName(config: AgentConfig, serverDefault: string | undefined): string | undefined {
  if (config.model || !config.provider) return config.model;
  if (serverDefault) {
    try {
      if (parseModelName(serverDefault, undefined, false).provider === config.provider) return serverDefault;
    } catch {
      // An unparseable server default is reported when it is actually used.
    }
  }
  return `${config.provider}/${DEFAULT_MODELS[config.provider]}`;
}

/** One agent run once its model and integrations are resolved. */
interface AgentRun extends Required<AgentRequest> {
  signal: AbortSignal;
  llm: LLMClient;
  integrations: Integrations;
  /** performance.now() when the run started. */
  started: number;
  /** The model the caller named, if any (a hint for sampling). */
  wanted: string | undefined;
}

async function loop(run: AgentRun): Promise<AgentResult> {
  const { session, config, options, deps, ctx, signal, llm, integrations, started, wanted } = run;
  const maxSteps = options.maxSteps ?? AGENT_DEFAULTS.maxSteps;
  const autoScreenshot = (options.autoScreenshot ?? AGENT_DEFAULTS.autoScreenshot) && llm.supportsImages;
  const waitBetweenActions = options.waitBetweenActions ?? AGENT_DEFAULTS.waitBetweenActions;
  const variables = new Variables(options.variables);
  // Counters the provider never reported stay out of the total (no reasoning_tokens: 0 for a model that said nothing).
  const usage = new UsageTotal();
  const addUsage = (more: Usage) => usage.add(more);
  let screenshotRequested = false;
  const env: ToolEnv = {
    session,
    config: deps.config,
    signal,
    variables,
    // A sampling model has no provider name to ask for: extract resolves the same wanted model to the same fallback.
    extractModel: { modelName: llm.provider === 'sampling' ? wanted : `${llm.provider}/${llm.model}`, modelClientOptions: config.options },
    modelFallback: ctx.modelFallback,
    addUsage,
    requestScreenshot: () => (screenshotRequested = llm.supportsImages),
    askHuman: (reason) => askHuman(reason, { session, live: deps.live, ctx, signal, timeoutMs: deps.config.liveView?.askHumanTimeoutMs }),
  };
  const toolbox = new Toolbox(config.tools, integrations, env);
  const system = systemPrompt(config.instructions, variables.names);
  const history = new History(variables.redact(taskMessage(options)));
  const actions: AgentAction[] = [];
  const timings: StepTiming[] = [];
  let eventSeq = session.lastEventSeq;
  let steps = 0;

  let lastTitle = '';
  const finish = async (
    stop: StopReason,
    success: boolean,
    completed: boolean,
    message: string,
    humanHelp?: HumanHelp,
  ): Promise<AgentResult> => ({
    success,
    message: variables.redact(message),
    actions,
    completed,
    metadata: {
      ...(await endedAt(session, variables, lastTitle)),
      steps,
      actionCount: actions.length,
      stopReason: stop,
      provider: llm.provider,
      model: llm.model,
      maxSteps,
      autoScreenshot,
      waitBetweenActions,
      integrations: integrations.labels,
      tools: toolbox.specs.map((spec) => spec.name),
      durationMs: Math.round(performance.now() - started),
      stepTimings: timings,
      ...(humanHelp ? { humanHelp } : {}),
    },
    usage: usage.total,
  });

  // Each model turn counts as a step too, so a model that never acts cannot loop forever.
  while (actions.length < maxSteps && steps < maxSteps) {
    throwIfAborted(signal);
    steps++;
    const timing: StepTiming = { step: steps, observeMs: 0, modelMs: 0, actionsMs: 0 };
    timings.push(timing);

    let mark = performance.now();
    const notes = session.eventsSince(eventSeq).map((event) => `${event.message}${event.url ? ` (${event.url})` : ''}`);
    eventSeq = session.lastEventSeq;
    const state = await observe(session, {
      step: steps,
      maxSteps,
      actionsLeft: maxSteps - actions.length,
      notes,
      screenshot: autoScreenshot || screenshotRequested,
      variables,
      signal,
    });
    screenshotRequested = false;
    lastTitle = state.title;
    history.addState(state);
    timing.observeMs = Math.round(performance.now() - mark);

    mark = performance.now();
    const response = await think(llm, {
      system,
      messages: history.messages,
      tools: toolbox.specs,
      toolChoice: 'required',
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      signal,
    });
    timing.modelMs = Math.round(performance.now() - mark);
    addUsage(response.usage);
    history.addAssistant(response.text, response.toolCalls);
    if (!response.toolCalls.length) {
      history.addNudge();
      continue;
    }

    mark = performance.now();
    let done: ToolOutcome['done'];
    for (const call of response.toolCalls) {
      // done is run even when the calls before it spent the last action, so an answer is never lost at the budget's edge.
      if (done || (actions.length >= maxSteps && call.name !== 'done')) {
        // Every call needs an answer before the conversation may go on.
        const why = done ? 'the run ended first' : 'no actions were left';
        history.addToolResult(call, { text: `Not executed: ${why}.`, error: 'not executed' });
        continue;
      }
      if (actions.length > 0 && waitBetweenActions > 0) await sleep(waitBetweenActions, signal).catch(() => throwIfAborted(signal));
      const pageUrl = session.recording.secrets.mask(variables.redact(session.page.url()));
      const actionStart = performance.now();
      const result = await toolbox.call(call);
      // A tool that does not say what it did in act's way (extract, an integration's) is named with its arguments and answer.
      const did =
        result.did ??
        (result.error === undefined ? `${call.name} ${JSON.stringify(call.arguments ?? {})}: ${result.text.split('\n')[0]}` : undefined);
      const action: AgentAction = {
        type: actionType(call),
        arguments: argumentsRecord(call.arguments),
        ...(did ? { message: cutLine(variables.redact(did)) } : {}),
        ...(response.text.trim() ? { reasoning: variables.redact(response.text.trim()) } : {}),
        pageUrl,
        timeMs: Math.round(performance.now() - actionStart),
        ...(result.error !== undefined ? { error: variables.redact(result.error) } : {}),
      };
      actions.push(action);
      history.addToolResult(call, result);
      ctx.progress?.({
        message: `action ${actions.length}: ${action.type}${result.error !== undefined ? ` failed: ${result.error}` : ''}`,
        data: { stage: 'action', step: steps, index: actions.length, action },
      });
      done = result.done;
    }
    timing.actionsMs = Math.round(performance.now() - mark);
    if (done?.humanHelp) return finish('ask_human', false, false, done.message, done.humanHelp);
    if (done) return finish('done', done.success, true, done.message);
  }
  return finish(
    'max_steps',
    false,
    false,
    `Stopped after ${actions.length} actions in ${steps} steps: maxSteps (${maxSteps}) was reached before the task was done.`,
  );
}

async function think(llm: LLMClient, request: Parameters<LLMClient['chat']>[0]): Promise<ChatResponse> {
  try {
    return await llm.chat(request);
  } catch (err) {
    if (request.signal?.aborted || isAbortError(err)) throw cancelledError(err);
    if (err instanceof ServiceError) throw err;
    throw new ServiceError(
      'model_error',
      `The ${llm.provider} model "${llm.model}" failed: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

interface ObserveOptions {
  step: number;
  maxSteps: number;
  actionsLeft: number;
  notes: string[];
  screenshot: boolean;
  variables: Variables;
  signal: AbortSignal;
}

/** Reads the page for the model: text with refs (iframes included) and, when wanted, a screenshot taken after the text so both show the settled page. */
async function observe(session: Session, options: ObserveOptions): Promise<PageState> {
  const page = session.page;
  const snapshot = await takeSnapshot(session, { iframes: true, domSettleTimeoutMs: STEP_DOM_SETTLE_MS }, { signal: options.signal }).catch(
    (err: unknown) => {
      if (options.signal.aborted) throw cancelledError();
      return {
        text: `(The page text could not be read: ${describeToolError(err)})`,
        url: session.recording.secrets.mask(page.url()),
        title: '',
      };
    },
  );
  // Taken at the size the model sees it (LOW_DETAIL_SIDE): Chromium scales it, nothing decodes it on this thread.
  const shot = options.screenshot
    ? await takeScreenshot(session, { format: 'jpeg', quality: 50 }, { maxSide: LOW_DETAIL_SIDE }).catch(() => undefined)
    : undefined;
  return {
    step: options.step,
    maxSteps: options.maxSteps,
    actionsLeft: options.actionsLeft,
    url: options.variables.redact(snapshot.url),
    title: options.variables.redact(snapshot.title),
    text: options.variables.redact(snapshot.text),
    notes: options.notes,
    ...(shot ? { screenshot: shot.image.toString('base64'), screenshotScale: shot.scale } : {}),
  };
}

/** act's method for an act call (click, fill, ...), the tool's name otherwise. */
function actionType(call: ToolCall): string {
  const method = call.name === ACT_TOOL.name ? argumentsRecord(call.arguments)?.method : undefined;
  return typeof method === 'string' ? method : call.name;
}

function argumentsRecord(args: unknown): Record<string, unknown> | undefined {
  if (args && typeof args === 'object' && !Array.isArray(args)) return args as Record<string, unknown>;
  if (typeof args === 'string' && args) return { raw: rawArguments(args) };
  return undefined;
}

/** Longest `actions[i].message`: what an action did in a line (a fill of a long text says all of it). */
const MAX_ACTION_MESSAGE_CHARS = 500;

function cutLine(text: string): string {
  return text.length <= MAX_ACTION_MESSAGE_CHARS ? text : `${text.slice(0, MAX_ACTION_MESSAGE_CHARS - 1)}…`;
}

/** Longest wait for the page's title when the run ends (a page stuck in a script never answers). */
const END_TITLE_MS = 1_000;

/** Where the page was when the run ended, for a caller judging the run: its URL and title, secrets masked. */
async function endedAt(session: Session, variables: Variables, lastTitle: string): Promise<{ url: string; title: string }> {
  const mask = (text: string) => variables.redact(session.recording.secrets.mask(text));
  const read = session.page.title();
  read.catch(() => undefined);
  const title = await withTimeout(read, END_TITLE_MS, () => new Error('no title in time')).catch(() => lastTitle);
  return { url: mask(session.page.url()), title: mask(title) };
}
