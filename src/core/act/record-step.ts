import { runText, type RunStep } from '../recording/index.js';
import type { Settled } from '../settle/index.js';
import type { Session } from '../sessions.js';
import type { Variables } from '../variables.js';
import type { Performed } from './perform.js';
import type { Action } from './schema.js';

interface DoneAction {
  action: Action;
  performed: Performed;
  settled: Settled;
  /** The action loaded another document (the script waits for it to load). */
  navigated: boolean;
  variables: Variables;
  instruction?: string;
}

/**
 * Adds a performed action to the session's run (docs/replay.md): its method, its target as a locator that survives a
 * reload (or the point it was given), its arguments with every value the session keeps secret as its placeholder, and
 * what act waited for after it. An upload keeps its files' names, not their content.
 */
export function recordStep(session: Session, { action, performed, settled, navigated, variables, instruction }: DoneAction): void {
  const secrets = session.recording.secrets;
  const mask = (value: unknown): unknown => {
    if (typeof value === 'string') return runText(secrets, variables.redact(value));
    if (Array.isArray(value)) return value.map(mask);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mask(item)]));
    return value;
  };
  const args = { ...(action.arguments ?? {}) };
  if (action.method === 'upload' && Array.isArray(args.files))
    args.files = (args.files as Array<{ name?: unknown; mimeType?: unknown }>).map(({ name, mimeType }) => ({ name, mimeType }));
  if (performed.dropTarget) {
    delete args.targetRef;
    args.targetSelector = performed.dropTarget.selector;
  }
  const waitFor = navigated || settled.waitedFor === 'navigation' ? 'load' : settled.waitedFor === 'network' ? 'networkidle' : undefined;
  // A selector given that no locator could be made for is kept as given.
  const target = performed.target ?? (action.selector ? { selector: action.selector, description: performed.description } : undefined);
  const point = !target && action.x !== undefined && action.y !== undefined ? { x: action.x, y: action.y } : {};
  const step: RunStep = {
    method: action.method,
    ...(target ? { target: { ...target, description: mask(target.description) as string } } : {}),
    ...point,
    ...(Object.keys(args).length ? { arguments: mask(args) as Record<string, unknown> } : {}),
    ...(waitFor ? { waitFor } : {}),
    ...(instruction ? { instruction: mask(instruction) as string } : {}),
  };
  session.recording.steps.add(step);
}
