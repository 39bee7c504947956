import { errors as playwrightErrors } from 'playwright-core';
import { isSettleWait, MAX_WAIT_MS, performAction, settleLine, type Action } from '../act/index.js';
import { z } from 'zod';
import { DEFAULTS, type ServiceConfig } from '../config.js';
import { ServiceError } from '../errors.js';
import { extract } from '../extract.js';
import type { ModelFallback } from '../llm/types.js';
import type { Usage } from '../usage.js';
import { navigate, type NavigatePolicy } from '../navigate.js';
import type { Session } from '../sessions.js';
import { latestMark, markAction, settleAfterAction } from '../settle/index.js';
import type { Variables } from '../variables.js';

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

const ref = z.string().min(1).describe('Element ref from the page text, e.g. "12" (without brackets).');

export const BROWSER_TOOLS = [
  defineBrowserTool({
    name: 'goto',
    description: 'Open a URL in the current tab.',
    input: z.object({ url: z.string().min(1).describe('Absolute http(s) URL.') }).strict(),
    run: async ({ url }, env) => {
      const result = await navigate(
        env.session,
        { url: env.variables.substitute(url), options: { timeout: DEFAULTS.navigationTimeoutMs } },
        env.config,
        { signal: env.signal },
      );
      const opened = result?.url ?? env.session.recording.secrets.mask(env.session.page.url());
      return { text: result ? `Opened ${opened} (HTTP ${result.status}).` : `Opened ${opened}.` };
    },
  }),
  defineBrowserTool({
    name: 'back',
    description: 'Go back to the previous page in the tab history.',
    input: z.object({}).strict(),
    run: (_args, env) => perform(env, { method: 'back' }),
  }),
  defineBrowserTool({
    name: 'click',
    description: 'Click an element (link, button, checkbox, ...) by its ref.',
    input: z.object({ ref }).strict(),
    run: (args, env) => perform(env, { ref: args.ref, method: 'click' }),
  }),
  defineBrowserTool({
    name: 'type',
    description:
      'Replace the text of an input, textarea or editable element. Write %name% to type a variable you were given; never invent secrets. submit: true presses Enter afterwards.',
    input: z
      .object({
        ref,
        text: z.string().describe('Text to type; %name% placeholders are filled in by the browser.'),
        submit: z.boolean().optional().describe('Press Enter after typing (submits most forms).'),
      })
      .strict(),
    run: async (args, env) => {
      const filled = await perform(env, { ref: args.ref, method: 'fill', arguments: { value: args.text } });
      if (!args.submit) return filled;
      const pressed = await perform(env, { ref: args.ref, method: 'press', arguments: { key: 'Enter' } });
      return { text: `${filled.text} ${pressed.text}` };
    },
  }),
  defineBrowserTool({
    name: 'press',
    description: 'Press a key or chord, e.g. "Enter", "Escape", "Tab", "Control+A", on an element (ref) or on the focused one.',
    input: z.object({ key: z.string().min(1), ref: ref.optional() }).strict(),
    run: (args, env) => perform(env, { ref: args.ref, method: 'press', arguments: { key: args.key } }),
  }),
  defineBrowserTool({
    name: 'select_option',
    description: 'Choose option(s) of a <select> by value or visible label.',
    input: z
      .object({ ref, values: z.array(z.string()).min(1).describe('Values or labels to select; several for a multi-select.') })
      .strict(),
    run: (args, env) => perform(env, { ref: args.ref, method: 'selectOption', arguments: { values: args.values } }),
  }),
  defineBrowserTool({
    name: 'hover',
    description: 'Move the mouse over an element (opens hover menus and tooltips).',
    input: z.object({ ref }).strict(),
    run: (args, env) => perform(env, { ref: args.ref, method: 'hover' }),
  }),
  defineBrowserTool({
    name: 'scroll',
    description: 'Scroll the page up or down by a number of screens, or scroll an element (ref) into view.',
    input: z
      .object({
        direction: z.enum(['up', 'down']).optional().describe('Default down.'),
        screens: z.number().positive().max(20).optional().describe('How far, in viewport heights (default 1).'),
        ref: ref.optional().describe('Scroll this element into view instead.'),
      })
      .strict(),
    run: (args, env) =>
      args.ref
        ? perform(env, { ref: args.ref, method: 'scroll' })
        : perform(env, { method: 'scroll', arguments: { direction: args.direction ?? 'down', screens: args.screens } }),
  }),
  defineBrowserTool({
    name: 'wait',
    description: 'Wait a number of milliseconds, or until some text is visible on the page; with neither, until the page settles.',
    input: z
      .object({
        ms: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe('Time to wait, ms.'),
        text: z.string().min(1).optional().describe('Wait until this text is visible.'),
        timeoutMs: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe('Longest wait for the text (default 10000).'),
      })
      .strict(),
    run: (args, env) =>
      perform(
        env,
        { method: 'wait', arguments: args.text !== undefined ? { text: args.text } : args.ms !== undefined ? { ms: args.ms } : {} },
        args.timeoutMs,
      ),
  }),
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
    run: async (args) => ({ text: 'Finished.', done: { success: args.success, message: args.message } }),
  }),
] as unknown as BrowserTool[];

/**
 * Browser tools are act's methods: one implementation (src/core/act), and like act they answer once the page has
 * finished reacting; the tool's answer is its message, plus a line when that took long.
 */
async function perform(env: ToolEnv, action: Action, timeoutMs?: number): Promise<ToolOutcome> {
  const mark = isSettleWait(action) ? latestMark(env.session) : await markAction(env.session);
  const performed = await performAction(env.session, action, { timeoutMs, signal: env.signal, variables: env.variables });
  const settled = await settleAfterAction(env.session, mark, { signal: env.signal });
  const line = settleLine({ settled });
  return { text: line ? `${performed.message} ${line}` : performed.message };
}

export function clip(text: string, max = MAX_RESULT_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n... (${text.length - max} more characters cut)`;
}

/** One line a model can act on, instead of Playwright's multi-line call log. */
export function describeToolError(err: unknown): string {
  if (err instanceof ServiceError) return `${err.code}: ${err.message}`;
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
