import { ServiceError } from '../errors.js';
import { actOperation, observeOperation } from './act.js';
import { agentExecuteOperation } from './agent.js';
import type { AnyOperation } from './define.js';
import { evaluateOperation } from './evaluate.js';
import { extractOperation } from './extract.js';
import { liveViewOperation } from './live-view.js';
import { navigateOperation } from './navigate.js';
import { sessionLog, sessionTrace } from './recording.js';
import { replayOperation, sessionScript } from './replay.js';
import { profileDelete, profileList, profileSave, sessionState } from './profiles.js';
import { screenshotOperation } from './screenshot.js';
import { sessionEnd, sessionGet, sessionList, sessionStart } from './sessions.js';

/**
 * Every operation, in the order MCP clients list their tools. Each door is generated from this table: an operation
 * listed here is an MCP tool (or folded into one), a REST route in the OpenAPI document, forwarded to peers, and a
 * library call. Adding one: README "Adding an operation".
 */
export const OPERATIONS = [
  sessionStart,
  navigateOperation,
  extractOperation,
  observeOperation,
  actOperation,
  replayOperation,
  screenshotOperation,
  evaluateOperation,
  sessionEnd,
  sessionList,
  sessionGet,
  sessionLog,
  sessionTrace,
  sessionScript,
  agentExecuteOperation,
  liveViewOperation,
  profileList,
  sessionState,
  profileSave,
  profileDelete,
] as const;

export type OperationName = (typeof OPERATIONS)[number]['name'];

export const operations: readonly AnyOperation[] = OPERATIONS as unknown as readonly AnyOperation[];

export function findOperation(name: string): AnyOperation | undefined {
  return operations.find((operation) => operation.name === name);
}

/** Throws at start-up when --operations-denied names no operation, so a typo cannot leave one open. */
export function checkOperationsDenied(names: readonly string[] | undefined): void {
  const unknown = (names ?? []).filter((name) => !findOperation(name));
  if (unknown.length)
    throw new ServiceError(
      'invalid_argument',
      `--operations-denied: no operation named ${unknown.join(', ')}; the operations are ${operations.map((o) => o.name).join(', ')}.`,
    );
}

export * from './define.js';
export {
  actOperation,
  agentExecuteOperation,
  evaluateOperation,
  extractOperation,
  navigateOperation,
  observeOperation,
  profileSave,
  screenshotOperation,
  sessionState,
};
