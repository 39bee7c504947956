import { randomUUID } from 'node:crypto';
import type { ModelFallback } from './llm/types.js';

/** The id of one operation (navigate, extract, agentExecute, ...): the door's, or made by the core when it gave none. */
export function newActionId(): string {
  return randomUUID();
}

/** What every core operation may receive from the door that called it. */
export interface OperationContext {
  /** Fires when the client cancels or goes away. */
  signal?: AbortSignal;
  /** Progress of the operation, sent as MCP progress notifications or SSE `log` events. */
  progress?: (event: ProgressEvent) => void;
  /** Used instead of model_not_configured when the server has no key for the chosen model (MCP sampling). */
  modelFallback?: ModelFallback;
  /** The id the door answers this call with; the action log and the trace name the step with it. Made here when unset. */
  actionId?: string;
  /**
   * Puts a person in front of the live view when the agent calls ask_human (MCP URL elicitation, an SSE event); the
   * agent then waits for Done. Absent: the agent stops and returns the link in its result.
   */
  askHuman?: (request: HumanRequest) => void;
}

/** The agent's call for a person, as a door delivers it. */
export interface HumanRequest {
  sessionId: string;
  /** Interactive live-view link. */
  url: string;
  reason: string;
  expiresAt: string;
  /** Settles when the person pressed Done or the wait ended (the door may tell its client, e.g. elicitation complete). */
  finished: Promise<void>;
  /** The door learnt nobody will come (the client declined): the agent's step fails now with this message. */
  decline(message: string): void;
}

export interface ProgressEvent {
  message: string;
  data?: Record<string, unknown>;
}
