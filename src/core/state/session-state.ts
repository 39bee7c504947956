import type { BrowserContext } from 'playwright-core';
import { MAX_STORAGE_STATE_BYTES, stateBytes, stateTooLarge, type StorageState } from './schema.js';
import { z } from 'zod';

export const StateRequest = z
  .object({
    indexedDB: z.boolean().optional(),
  })
  .strict();
export type StateRequest = z.infer<typeof StateRequest>;

/** The context's cookies and storage now, within MAX_STORAGE_STATE_BYTES so it can always be passed back in. */
export async function readStorageState(context: BrowserContext, request: StateRequest = {}): Promise<StorageState> {
  const state = (await context.storageState({ indexedDB: request.indexedDB ?? false })) as StorageState;
  const bytes = stateBytes(state);
  if (bytes > MAX_STORAGE_STATE_BYTES) throw stateTooLarge(bytes, "The session's storage state");
  return state;
}

/** How much a state holds, for answers that must not carry its values (profile listings, saves). */
export function stateSummary(state: StorageState): { cookies: number; origins: number; bytes: number } {
  return { cookies: state.cookies.length, origins: state.origins.length, bytes: stateBytes(state) };
}
