/**
 * Scripted models for the kit, served by the fake model server (test/fixtures/fake-llm.ts): each turn is written as
 * intents (click this ref, fill that one) chosen from the page text the request carries, and turned into calls of
 * whatever tools the request offers, so a script survives a change of the agent's tool names and shapes.
 */
import { refOf } from '../../test/agent-fixtures.js';
import type { FakeReply, ReceivedRequest } from '../../test/fixtures/fake-llm.js';

export type Method = 'click' | 'dblclick' | 'fill' | 'press' | 'check' | 'goto' | 'done';

export interface Intent {
  method: Method;
  ref?: string;
  value?: string;
  key?: string;
  url?: string;
  success?: boolean;
  message?: string;
}

/** One model turn: the intents for this request's page. */
export type Turn = (request: ReceivedRequest) => Intent[];

/** Tool names that may carry each intent, in order of preference (one tool per method, then the older agent names). */
const CANDIDATES: Record<Method, string[]> = {
  click: ['click'],
  dblclick: ['dblclick', 'double_click'],
  fill: ['fill', 'type'],
  press: ['press'],
  check: ['check', 'click'],
  goto: ['goto', 'navigate'],
  done: ['done'],
};

interface Parameters {
  properties?: Record<string, { enum?: unknown[]; type?: unknown; properties?: Record<string, unknown> }>;
}

/** The tools of a request, by name, with their parameter schemas (Chat Completions or Messages form). */
function offeredTools(request: ReceivedRequest): Map<string, Parameters> {
  const tools = (request.body.tools ?? []) as Array<{
    name?: string;
    input_schema?: Parameters;
    function?: { name: string; parameters?: Parameters };
  }>;
  return new Map(tools.map((tool) => [tool.function?.name ?? tool.name!, tool.function?.parameters ?? tool.input_schema ?? {}]));
}

const pick = (props: Record<string, unknown>, names: string[]): string => names.find((name) => name in props) ?? names[0]!;

/** The intent's own arguments under the names the schema uses. */
function fieldsFor(intent: Intent, props: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  if (intent.ref !== undefined) args[pick(props, ['ref', 'target', 'element'])] = intent.ref;
  if (intent.value !== undefined) args[pick(props, ['value', 'text'])] = intent.value;
  if (intent.key !== undefined) args[pick(props, ['key', 'keys'])] = intent.key;
  if (intent.url !== undefined) args[pick(props, ['url'])] = intent.url;
  if (intent.success !== undefined) args[pick(props, ['success'])] = intent.success;
  if (intent.message !== undefined) args[pick(props, ['message', 'answer', 'result'])] = intent.message;
  return args;
}

/** A tool call for the intent among the offered tools, or undefined when none can carry it. */
export function callFor(request: ReceivedRequest, intent: Intent): { name: string; arguments: Record<string, unknown> } | undefined {
  const tools = offeredTools(request);
  for (const name of CANDIDATES[intent.method]) {
    const params = tools.get(name);
    if (params) return { name, arguments: fieldsFor(intent, params.properties ?? {}) };
  }
  // One tool with a method enum: {method, ref, ...} with the method's arguments flat or under `arguments`.
  for (const [name, params] of tools) {
    const props = params.properties ?? {};
    const methods = props.method?.enum ?? [];
    const method = intent.method === 'check' && !methods.includes('check') ? 'click' : intent.method;
    if (!methods.includes(method)) continue;
    const { ref, ...rest } = intent;
    const inner = fieldsFor(rest, props.arguments?.properties ?? props);
    const target = ref !== undefined ? { [pick(props, ['ref', 'target'])]: ref } : {};
    return { name, arguments: { method, ...target, ...(props.arguments && Object.keys(inner).length ? { arguments: inner } : inner) } };
  }
  return undefined;
}

/** A turn as the fake server's reply: the intents' calls, or done(false) naming what could not be done. */
export function turnReply(turn: Turn): (request: ReceivedRequest) => FakeReply {
  return (request): FakeReply => {
    let intents: Intent[];
    try {
      intents = turn(request);
    } catch (err) {
      intents = [{ method: 'done', success: false, message: `The page was not as scripted: ${String(err).slice(0, 300)}` }];
    }
    const calls = intents.map((intent) => callFor(request, intent) ?? intent.method);
    const missing = calls.find((call) => typeof call === 'string');
    if (missing !== undefined) {
      const done = callFor(request, { method: 'done', success: false, message: `No tool can ${missing}.` })!;
      return { toolCalls: [done] };
    }
    return { toolCalls: calls as Array<{ name: string; arguments: Record<string, unknown> }> };
  };
}

export const ref = (pattern: RegExp) => (request: ReceivedRequest) => refOf(request, pattern);
export const done =
  (success: boolean, message: string): Turn =>
  () => [{ method: 'done', success, message }];
