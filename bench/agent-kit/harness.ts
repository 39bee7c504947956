/**
 * Runs the agent (through the library, as `session.agent(config).execute(...)`) on kit tasks against a model
 * endpoint, and reports per task: success read from the page, steps, actions, and prompt tokens counted from the
 * request bodies the kit's model server received (tokens.ts) beside those the provider reported.
 */
import type { BrowserSessions } from '../../src/client/index.js';
import type { AgentResult } from '../../src/core/agent/schema.js';
import type { SiteServer } from '../../test/fixtures/site-server.js';
import type { ModelServer } from './model-server.js';
import type { KitTask } from './tasks.js';
import { chatBodyTokens, promptTokens } from './tokens.js';

export interface KitReport {
  task: string;
  suite: string;
  success: boolean;
  /** Model turns. */
  steps: number;
  actions: number;
  /** Counted from the request bodies (tokens.ts: OpenAI's published counting, images included), per model request and in total. */
  promptTokensPerStep: number[];
  promptTokens: number;
  imageTokens: number;
  /** As the endpoint reported them (the fake server's are fixed numbers). */
  reportedInputTokens: number;
  /** The agent's own message, or why the run failed. */
  message: string;
  stopReason?: string;
}

export interface KitRun {
  lib: BrowserSessions;
  site: SiteServer;
  /** The endpoint the agent calls; its recorded requests are read after each task. */
  models: ModelServer;
  model: string;
  apiKey: string;
  /** Longest wait for one model answer (relay: a person answering). */
  modelTimeoutMs?: number;
  autoScreenshot?: boolean;
  /** Called before each task, e.g. to queue a scripted model's turns. */
  prepare?(task: KitTask): void;
  onReport?(report: KitReport): void;
}

export async function runTask(run: KitRun, task: KitTask): Promise<KitReport> {
  run.models.reset();
  run.models.label = task.name;
  run.prepare?.(task);
  const session = await run.lib.startSession();
  let result: AgentResult | undefined;
  let failure: string | undefined;
  let pageText = '';
  try {
    await session.navigate(run.site.url(task.path));
    result = await session
      .agent({
        provider: 'openai',
        model: run.model,
        options: { apiKey: run.apiKey, baseURL: run.models.baseURL, maxRetries: 0, timeout: run.modelTimeoutMs ?? 120_000 },
      })
      .execute({
        instruction: task.instruction,
        maxSteps: task.maxSteps,
        ...(task.variables ? { variables: task.variables } : {}),
        ...(run.autoScreenshot !== undefined ? { autoScreenshot: run.autoScreenshot } : {}),
      });
    pageText = (await session.page.extract()).pageText;
  } catch (err) {
    failure = err instanceof Error ? err.message : String(err);
  } finally {
    await session.end().catch(() => undefined);
  }
  const counted = run.models.requests.map(chatBodyTokens);
  const report: KitReport = {
    task: task.name,
    suite: task.suite,
    success: failure === undefined && task.check(pageText),
    steps: (result?.metadata?.steps as number | undefined) ?? counted.length,
    actions: result?.actions.length ?? 0,
    promptTokensPerStep: counted.map(promptTokens),
    promptTokens: counted.reduce((sum, tokens) => sum + promptTokens(tokens), 0),
    imageTokens: counted.reduce((sum, tokens) => sum + tokens.images, 0),
    reportedInputTokens: result?.usage?.input_tokens ?? 0,
    message: failure ?? result?.message ?? '',
    ...(result?.metadata?.stopReason ? { stopReason: String(result.metadata.stopReason) } : {}),
  };
  run.onReport?.(report);
  return report;
}

/** Runs the tasks one after another; stops early when a relay's person stopped answering. */
export async function runKit(run: KitRun, tasks: KitTask[]): Promise<KitReport[]> {
  const reports: KitReport[] = [];
  for (const task of tasks) {
    if (run.models.abandoned) break;
    reports.push(await runTask(run, task));
  }
  return reports;
}
