import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ServiceError } from '../errors.js';
import { MAX_RUN_STEPS, RunStep } from '../recording/index.js';

/**
 * A run as it is kept for replay (docs/replay.md): its steps, and for a cached agent run what it was asked and what it
 * answered. Nothing in it is a secret's value: steps hold placeholders.
 */
export const StoredRun = z
  .object({
    steps: z.array(RunStep).max(MAX_RUN_STEPS),
    instruction: z.string().optional().describe("What the run was for (an agent run's task): healing reads it."),
    answer: z.object({ success: z.boolean(), message: z.string() }).strict().optional().describe("A cached agent run's final answer."),
  })
  .strict();
export type StoredRun = z.infer<typeof StoredRun>;

/** The id of a run of `owner`'s made of these steps: the same steps give the same id, so storing twice keeps one. */
export function runIdOf(owner: string, steps: RunStep[]): string {
  return `run_${digest(`${owner}\0${JSON.stringify(steps)}`)}`;
}

/** The id a cached agent run is kept under: its key, or its instruction, start URL and variables' names. */
export function cacheIdOf(owner: string, parts: { cacheKey?: string; instruction: string; startUrl: string; variables: string[] }): string {
  const what =
    parts.cacheKey !== undefined ? ['key', parts.cacheKey] : ['run', parts.instruction, parts.startUrl, [...parts.variables].sort()];
  return `agent_${digest(`${owner}\0${JSON.stringify(what)}`)}`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

export function runNotFound(id: string): ServiceError {
  return new ServiceError(
    'run_not_found',
    `No run ${JSON.stringify(id.slice(0, 100))} is kept for your key. session_script answers a runId; runs are per API key.`,
  );
}
