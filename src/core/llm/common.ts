/** What every provider adapter shares. */

/** Longest wait for one model call unless the caller sets `timeout`. */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** Schema names must match ^[a-zA-Z0-9_-]{1,64}$. */
export function schemaName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'result';
}
