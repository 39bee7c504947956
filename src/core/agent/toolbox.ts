import { z } from 'zod';
import { cancelledError, isAbortError, ServiceError } from '../errors.js';
import type { ToolCall, ToolSpec } from '../llm/types.js';
import { withTimeout } from '../time.js';
import { checkDepth, parseInput, toJsonSchema } from '../validation.js';
import { Integrations, sanitize } from './integrations.js';
import type { AgentTool } from './schema.js';
import { ACT_TOOL } from './act-tools.js';
import { coerceArguments } from './coerce.js';
import { clip, describeToolError, GOTO_TOOL, OWN_TOOLS, type BrowserTool, type ToolEnv, type ToolOutcome } from './tools.js';

/** The browser's tools as the model sees them: goto, act (all of act's methods), extract, screenshot, ask_human and done. */
export const BROWSER_TOOLS: BrowserTool[] = [GOTO_TOOL, ACT_TOOL, ...OWN_TOOLS];

/** Longest any one action may take before the model is told it timed out and the loop moves on. */
const ACTION_GUARD_MS = 90_000;

/** What one tool call did, for the model (text) and for the result (did, error, done). */
export interface CallResult {
  text: string;
  did?: string;
  error?: string;
  done?: ToolOutcome['done'];
}

/** Most characters of arguments that were not JSON kept for the model to see again, and in the run's result. */
const MAX_RAW_ARGUMENTS_CHARS = 1_000;

/** Arguments that were not JSON as the model sent them, cut to MAX_RAW_ARGUMENTS_CHARS. */
export function rawArguments(text: string): string {
  return text.length <= MAX_RAW_ARGUMENTS_CHARS ? text : `${text.slice(0, MAX_RAW_ARGUMENTS_CHARS)}… (${text.length} characters in all)`;
}

/** Every tool the model may call in one run: the browser's, the caller's own (library), and the integrations'. */
export class Toolbox {
  readonly specs: ToolSpec[];
  private readonly browser = new Map<string, BrowserTool>(BROWSER_TOOLS.map((tool) => [tool.name, tool]));
  private readonly custom: Map<string, AgentTool>;

  constructor(
    custom: Record<string, AgentTool> | undefined,
    private readonly integrations: Integrations,
    private readonly env: ToolEnv,
  ) {
    this.custom = new Map(Object.entries(custom ?? {}));
    this.specs = [
      ...BROWSER_TOOLS.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: toJsonSchema(tool.input) })),
      ...[...this.custom].map(([name, tool]) => ({ name, description: tool.description, inputSchema: toJsonSchema(tool.inputSchema) })),
      ...integrations.specs,
    ];
  }

  /** Names no integration tool may take. */
  static reservedNames(custom: Record<string, AgentTool> | undefined): Set<string> {
    return new Set([...BROWSER_TOOLS.map((tool) => tool.name), ...Object.keys(custom ?? {})]);
  }

  /** Refuses custom tools the providers would reject, before any model call. */
  static checkCustomTools(custom: Record<string, AgentTool> | undefined): void {
    for (const [name, tool] of Object.entries(custom ?? {})) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(name) || sanitize(name) !== name) {
        throw new ServiceError('invalid_argument', `Custom tool name "${name}" must be 1-64 letters, digits, "_" or "-".`);
      }
      if (BROWSER_TOOLS.some((builtin) => builtin.name === name))
        throw new ServiceError('invalid_argument', `Custom tool "${name}" would hide the built-in browser tool of that name; rename it.`);
      if (!tool || typeof tool.execute !== 'function' || !(tool.inputSchema instanceof z.ZodType)) {
        throw new ServiceError('invalid_argument', `Custom tool "${name}" needs a description, a zod inputSchema and an execute function.`);
      }
    }
  }

  /** Runs one call; failures become an error result for the model, except cancellation, which ends the run. */
  async call(call: ToolCall): Promise<CallResult> {
    try {
      const args = parseArguments(call);
      if (this.browser.get(call.name)?.unguarded) return await this.dispatch(call.name, args);
      return await withTimeout(
        this.dispatch(call.name, args),
        ACTION_GUARD_MS,
        () => new ServiceError('timeout', `${call.name} did not finish within ${ACTION_GUARD_MS / 1000} s.`),
      );
    } catch (err) {
      if (this.env.signal.aborted || isAbortError(err)) throw cancelledError(err);
      const error = this.env.variables.redact(describeToolError(err));
      return { text: error, error };
    }
  }

  private async dispatch(name: string, args: Record<string, unknown>): Promise<CallResult> {
    const browserTool = this.browser.get(name);
    if (browserTool) {
      return browserTool.run(parseInput(browserTool.input, coerceArguments(browserTool.input, args), `arguments for ${name}`), this.env);
    }
    const customTool = this.custom.get(name);
    if (customTool) {
      const input = parseInput(customTool.inputSchema, this.env.variables.substituteDeep(args), `arguments for ${name}`);
      const output = await customTool.execute(input, { signal: this.env.signal });
      return { text: clip(this.env.variables.redact(typeof output === 'string' ? output : (JSON.stringify(output) ?? 'OK'))) };
    }
    if (this.integrations.has(name)) {
      // Variables stay placeholders here: their values are for the page, not for third-party servers.
      return { text: clip(this.env.variables.redact(await this.integrations.call(name, args, this.env.signal))) };
    }
    throw new ServiceError(
      'invalid_argument',
      `Unknown tool "${name}". Available tools: ${this.specs.map((spec) => spec.name).join(', ')}.`,
    );
  }
}

function parseArguments(call: ToolCall): Record<string, unknown> {
  const args = call.arguments;
  if (args === undefined || args === null || args === '') return {};
  // The history holds {} for them (strict servers reject a history echoing invalid JSON): the model sees what it sent here.
  if (typeof args === 'string')
    throw new ServiceError(
      'invalid_argument',
      `The arguments of ${call.name} were not valid JSON (the history shows them as {}); send a JSON object. You sent:\n${rawArguments(args)}`,
    );
  if (typeof args !== 'object' || Array.isArray(args))
    throw new ServiceError('invalid_argument', `The arguments of ${call.name} must be a JSON object.`);
  checkDepth(args, `The arguments of ${call.name}`);
  return args as Record<string, unknown>;
}
