import { UsageTotal, type Usage } from '../usage.js';
import { createModelClient, type ModelDefaults } from '../llm/index.js';
import type { OperationContext } from '../operation.js';
import type { Session } from '../sessions.js';
import { takeSnapshot, type ElementRef, type PageSnapshot } from '../snapshot/index.js';
import { Variables } from '../variables.js';
import { inferElements } from './infer.js';
import type { ActMethod, ObservedAction, ObserveRequest, ObserveResult } from './schema.js';

const FILL_ROLES = new Set(['textbox', 'searchbox', 'textField', 'spinbutton', 'slider']);
const CHECK_ROLES = new Set(['checkbox', 'switch', 'menuitemcheckbox', 'radio', 'menuitemradio']);
const NOT_ACTIONS = new Set(['Iframe', 'IframePresentational']);

/**
 * The elements of the page (or of the XPath scope) a user can act on, each with the method that fits it. Without an
 * instruction this is the page text's refs, no model call; with one, a model picks the matching elements and every ref
 * it names is checked against the page (unknown ones are dropped).
 */
export async function observe(
  session: Session,
  req: ObserveRequest,
  defaults: ModelDefaults,
  ctx: OperationContext = {},
): Promise<ObserveResult & { usage?: Usage }> {
  const llm =
    req.instruction !== undefined
      ? createModelClient(req.modelName, req.modelClientOptions, { ...defaults, fallback: ctx.modelFallback })
      : undefined;
  const snapshot = await takeSnapshot(
    session,
    { selector: req.selector, iframes: req.iframes, domSettleTimeoutMs: req.domSettleTimeoutMs },
    ctx,
  );
  if (!llm || req.instruction === undefined) return { actions: interactiveElements(snapshot) };
  const usage = new UsageTotal();
  const actions = await inferElements(
    llm,
    { instruction: req.instruction, snapshot, variables: new Variables(), signal: ctx.signal },
    usage,
  );
  return { actions, usage: usage.total };
}

/** Every ref of the page text with the method that fits its role and state, and its line of the text as description. */
export function interactiveElements(snapshot: PageSnapshot): ObservedAction[] {
  const lines = controlLines(snapshot.text);
  const actions: ObservedAction[] = [];
  for (const element of snapshot.refs.values()) {
    if (NOT_ACTIONS.has(element.role)) continue;
    const line = lines.get(element.ref) ?? '';
    actions.push({ ref: element.ref, description: line || describe(element), method: methodFor(element, line), arguments: {} });
  }
  return actions;
}

function methodFor(element: ElementRef, line: string): ActMethod {
  if (FILL_ROLES.has(element.role)) return 'fill';
  if (element.role === 'combobox') return / options: /.test(line) ? 'selectOption' : 'fill';
  if (element.role === 'listbox') return 'selectOption';
  if (CHECK_ROLES.has(element.role)) return /\((?:[^)]*, )?checked[,)]/.test(line) && element.role !== 'radio' ? 'uncheck' : 'check';
  if (element.role === 'scrollbar') return 'scroll';
  return 'click';
}

function describe(element: ElementRef): string {
  return element.name ? `${element.role}: ${element.name}` : element.role;
}

// A ref with a backslash before it (`\[12]`) is the page's own text (render.ts `escaped`): it names no element.
const CONTROL = /(?<!\\)\[(\d+(?:-\d+)?)\] (.*?)(?= \[\d+(?:-\d+)?\] | \[[^\]]*\]\(\d+(?:-\d+)?\)|$)/g;
const TABLE_CONTROL = /(?<!\\)\[(\d+(?:-\d+)?)\] (.*?)(?= \[\d+(?:-\d+)?\] | \[[^\]]*\]\(\d+(?:-\d+)?\)| \| |$)/g;

/** Each control's own part of its line, e.g. `textbox: Username = "alice" (required)`; links read `link: Pricing`. */
function controlLines(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of text.split('\n')) {
    // A control's part runs to the next control or link on its line, or in a table row to its cell's end.
    const controls = line.trimStart().startsWith('|') ? TABLE_CONTROL : CONTROL;
    for (const match of line.matchAll(controls)) found.set(match[1]!, match[2]!.replace(/ \|$/, '').trim());
    for (const match of line.matchAll(/\[([^\]]*)\]\((\d+(?:-\d+)?)\)/g)) found.set(match[2]!, `link: ${match[1]}`);
  }
  return found;
}
