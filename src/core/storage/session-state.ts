import type { BrowserContext } from 'playwright-core';
import { ServiceError } from '../errors.js';
import { MAX_ORIGINS, MAX_STORAGE_STATE_BYTES, stateBytes, stateTooLarge, type StorageState } from './schema.js';
import { z } from 'zod';

export const StateRequest = z
  .object({
    indexedDB: z.boolean().optional(),
  })
  .strict();
export type StateRequest = z.infer<typeof StateRequest>;

/** The context's cookies and storage now, within MAX_STORAGE_STATE_BYTES and MAX_ORIGINS so it can always be passed back in. */
export async function readStorageState(context: BrowserContext, request: StateRequest = {}): Promise<StorageState> {
  const state = (await context.storageState({ indexedDB: request.indexedDB ?? false })) as StorageState;
  const bytes = stateBytes(state);
  if (bytes > MAX_STORAGE_STATE_BYTES) throw stateTooLarge(bytes, "The session's storage state");
  if (state.origins.length > MAX_ORIGINS)
    throw new ServiceError(
      'payload_too_large',
      `The session's storage state holds ${state.origins.length} origins, over the limit of ${MAX_ORIGINS} (MAX_ORIGINS) a session can start from.`,
      { details: { origins: state.origins.length, limit: MAX_ORIGINS } },
    );
  return state;
}

/** How much a state holds, for answers that must not carry its values (profile listings, saves). */
export function stateSummary(state: StorageState): { cookies: number; origins: number; bytes: number } {
  return { cookies: state.cookies.length, origins: state.origins.length, bytes: stateBytes(state) };
}

/**
 * Sets a checked state's cookies. One the browser still refuses (a rule StorageCookie does not know) is
 * `invalid_argument` naming it by index and name, never its value: the cookies are then set one by one to find it.
 */
export async function addStateCookies(context: BrowserContext, cookies: StorageState['cookies']): Promise<void> {
  if (cookies.length === 0) return;
  try {
    await context.addCookies(cookies);
  } catch (err) {
    if (!context.browser()?.isConnected()) throw err;
    for (const [index, cookie] of cookies.entries()) {
      try {
        await context.addCookies([cookie]);
      } catch (cause) {
        if (!context.browser()?.isConnected()) throw cause;
        throw new ServiceError(
          'invalid_argument',
          `The browser refused cookie ${index} (${JSON.stringify(cookie.name.slice(0, 64))}) of the storage state: fix or drop it.`,
          { cause, details: { cookie: index } },
        );
      }
    }
    throw err;
  }
}
