import { errors as playwrightErrors } from 'playwright-core';
import { z } from 'zod';
import { DEFAULTS, type ServiceConfig } from '../config.js';
import { ServiceError } from '../errors.js';
import { extract } from '../extract.js';
import type { ModelFallback } from '../llm/types.js';
import type { Usage } from '../usage.js';
import { navigate, type NavigatePolicy } from '../navigate.js';
import type { Session } from '../sessions.js';
import type { Variables } from '../variables.js';
import { READ_AGAIN } from '../snapshot/refs.js';

const MAX_RESULT_CHARS = 8_000;

/** What a browser tool needs besides its arguments. */
export interface ToolEnv {
  session: Session;
  /** Server defaults: URL policy for goto, model and keys for extract. */
  config: NavigatePolicy & Pick<ServiceConfig, 'model' | 'env'>;
  signal: AbortSignal;
  variables: Variables;
  /** Model used by the extract tool: the agent's own. */
  extractModel: { modelName?: string; modelClientOptions?: Record<string, unknown> };
  /** The door's model when the server has no key (MCP sampling), for the extract tool too. */
  modelFallback?: ModelFallback;
  addUsage(usage: Usage): void;
  /** Asks the loop to attach a screenshot to the next page state. */
  requestScreenshot(): boolean;
  /** Hands the page to a person (ask_human); resolves with what the model is told, or `done` when the run must stop. */
  askHuman(reason: string): Promise<ToolOutcome>;
}

/** A tool's answer to the model; `done` ends the run. */
export interface ToolOutcome {
  text: string;
  /** What the call did, in a line, for the run's result (act's own words: `Filled [3] textbox "Email" with "%email%".`). */
  did?: string;
  /** Why a call that answered went wrong in part (several actions that stopped at a failing one). */
  error?: string;
  done?: { success: boolean; message: string; humanHelp?: HumanHelp };
}

/** The link a person opens when the agent stopped to ask for one (ask_human with no door to reach them). */
export interface HumanHelp {
  url: string;
  reason: string;
  expiresAt: string;
}

export interface BrowserTool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: S;
  run(args: z.infer<S>, env: ToolEnv): Promise<ToolOutcome>;
  /** Not bound by the action time guard: it waits for a person, with its own timeout. */
  unguarded?: boolean;
}

function defineBrowserTool<S extends z.ZodObject>(tool: BrowserTool<S>): BrowserTool<S> {
  return tool;
}

/** The agent's tools besides act's methods (src/core/agent/act-tools.ts): the toolbox lists goto, act's, then these. */
export const GOTO_TOOL = defineBrowserTool({
  name: 'goto',
  description: 'Open a URL in the current tab.',
  input: z.object({ url: z.string().min(1).describe('Absolute http(s) URL.') }).strict(),
  run: async ({ url }, env) => {
    const address = env.variables.substitute(url);
    // A variable in the address goes to that site: only to an origin it names, when it names some.
    if (env.variables.usedIn(url)) {
      env.variables.checkOrigins(url, [address]);
      env.session.recording.secrets.typed();
    }
    const result = await navigate(env.session, { url: address, options: { timeout: DEFAULTS.navigationTimeoutMs } }, env.config, {
      signal: env.signal,
    });
    const opened = result?.url ?? env.session.recording.secrets.mask(env.session.page.url());
    const text = result ? `Opened ${opened} (HTTP ${result.status}).` : `Opened ${opened}.`;
    return { text, did: text };
  },
}) as unknown as BrowserTool;

export const OWN_TOOLS = [
  defineBrowserTool({
    name: 'extract',
    description:
      'Read data from the current page: describe what you need, and optionally give a JSON Schema (an object schema) for the answer. Use it for information the page text shows only partly.',
    input: z
      .object({
        instruction: z.string().min(1),
        schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of an object.'),
      })
      .strict(),
    run: async (args, env) => {
      const outcome = await extract(env.session, { instruction: args.instruction, schema: args.schema, ...env.extractModel }, env.config, {
        signal: env.signal,
        modelFallback: env.modelFallback,
      });
      if (outcome.usage) env.addUsage(outcome.usage);
      return { text: clip(env.variables.redact(JSON.stringify(outcome.result))) };
    },
  }),
  defineBrowserTool({
    name: 'screenshot',
    description: 'Look at the page: a screenshot is attached to the next page state.',
    input: z.object({}).strict(),
    run: async (_args, env) => ({
      text: env.requestScreenshot()
        ? 'A screenshot is attached to the next page state.'
        : 'This model does not take images; rely on the page text.',
    }),
  }),
  defineBrowserTool({
    name: 'ask_human',
    description:
      'Hand the page to a person when you must not or cannot go on alone (a login, a two-factor code, a CAPTCHA, a confirmation that is theirs to give). They act in a live view and press Done; you then continue from the page as they left it.',
    input: z.object({ reason: z.string().min(1).max(500).describe('What the person should do, in one sentence.') }).strict(),
    unguarded: true,
    run: ({ reason }, env) => env.askHuman(reason),
  }),
  defineBrowserTool({
    name: 'done',
    description:
      'Finish: call this once the task is complete (success true) or cannot be completed (success false), with a message stating the result.',
    input: z
      .object({
        success: z.boolean().describe('Whether the task was accomplished.'),
        message: z.string().describe('The answer or outcome, including any values the task asked for.'),
      })
      .strict(),
    run: async (args) => ({
      text: 'Finished.',
      did: `Finished, saying ${args.success ? 'it succeeded' : 'it failed'}.`,
      done: { success: args.success, message: args.message },
    }),
  }),
] as unknown as BrowserTool[];

export function clip(text: string, max = MAX_RESULT_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n... (${text.length - max} more characters cut)`;
}

/** What the agent can do about a ref that does not work: it has no tool to read the page, a page state comes each step. */
const AGENT_READ_AGAIN = 'the next page state shows the refs that work now; use one of those, or a selector, or x and y.';

/** A message for the agent's model: where it says to read the page again, what the agent can do instead. */
export function forAgent(message: string): string {
  return message.replaceAll(READ_AGAIN, AGENT_READ_AGAIN);
}

/** One line a model can act on, instead of Playwright's multi-line call log. */
export function describeToolError(err: unknown): string {
  if (err instanceof ServiceError) return `${err.code}: ${forAgent(err.message)}`;
  if (err instanceof playwrightErrors.TimeoutError) {
    return `timeout: ${firstLine(err.message)} The element may be hidden, disabled or covered; check the page text and try another ref.`;
  }
  if (err instanceof Error) return firstLine(err.message);
  return String(err);
}

function firstLine(message: string): string {
  return message
    .split('\n')[0]!
    .replace(/^\w+\.\w+: /, '')
    .trim();
}
