import { z } from 'zod';
import {
  MAX_PROFILES_PER_KEY,
  MAX_STORAGE_STATE_BYTES,
  ProfileInfo,
  ProfileList,
  ProfileNameField,
  SaveProfileRequest,
  StateRequest,
  StorageState,
} from '../profiles/index.js';
import { defineOperation, defineSessionOperation } from './define.js';

/**
 * Storage state out of a session, and the caller's named profiles (docs/profiles.md). MCP lists them as one tool,
 * profile_list, with the others folded in (`operation: "profile_save"`...): four tools would cost four times the
 * tool-list tokens. session_start {storageState, profile} and session_end {saveProfile} are in sessions.ts.
 */

/** The largest session_start body: a storage state at its limit plus the other options. */
export const MAX_START_BODY_BYTES = MAX_STORAGE_STATE_BYTES + 64 * 1024;

export const profileList = defineOperation({
  name: 'profile_list',
  title: 'Saved logins (profiles)',
  description: 'Your saved logins; session_start {profile} uses one.',
  summary: "The caller's profiles: names, save times and sizes, never their cookies or storage.",
  input: z.object({}).strict(),
  output: ProfileList,
  kind: 'read',
  idempotent: true,
  session: false,
  answer: 'plain',
  example: {},
  rest: { method: 'GET', path: '/v1/profiles', operationId: 'ProfileList', quick: true },
  text: (list) => list.profiles.map((profile) => `${profile.name} (saved ${profile.savedAt})`).join('\n') || 'No profiles.',
  run: async (_input, { service, owner }) => ({ result: await service.listProfiles(owner), pageEvents: [] }),
});

export const profileSave = defineSessionOperation({
  name: 'profile_save',
  title: 'Save a session as a profile',
  description: `save session's login as name (at most ${MAX_PROFILES_PER_KEY} per key).`,
  summary: "Save the session's state as a named profile of the caller's key (default: the one it started from); the last save wins.",
  input: SaveProfileRequest,
  output: ProfileInfo,
  kind: 'action',
  openWorld: false,
  mcp: { foldInto: 'profile_list' },
  example: { name: 'example' },
  rest: { method: 'POST', path: '/v1/sessions/{id}/saveProfile', operationId: 'ProfileSave', quick: true },
  text: (saved) => `Saved profile "${saved.name}".`,
  logged: false,
  work: async (session, input, { service, owner }) => ({ result: await service.profiles.save(owner, session, input) }),
});

export const profileDelete = defineOperation({
  name: 'profile_delete',
  title: 'Delete a profile',
  description: 'delete name.',
  summary: "Delete one of the caller's profiles by name.",
  input: z.object({ name: ProfileNameField }).strict(),
  output: z.object({ success: z.literal(true) }),
  kind: 'destructive',
  session: false,
  answer: 'body',
  mcp: { foldInto: 'profile_list' },
  example: { name: 'example' },
  rest: { method: 'POST', path: '/v1/profiles/delete', operationId: 'ProfileDelete', quick: true },
  run: async ({ name }, { service, owner }) => {
    await service.deleteProfile(owner, name);
    return { result: { success: true as const }, pageEvents: [] };
  },
});

export const sessionState = defineSessionOperation({
  name: 'session_state',
  title: "A session's storage state",
  description: "session's cookies+storage.",
  summary: "The session's storage state now (Playwright's shape: cookies, origins with localStorage; IndexedDB with indexedDB: true).",
  input: StateRequest,
  output: StorageState,
  kind: 'read',
  openWorld: false,
  mcp: { foldInto: 'profile_list' },
  example: {},
  rest: { method: 'POST', path: '/v1/sessions/{id}/state', operationId: 'SessionState', quick: true },
  text: (state) => `${state.cookies.length} cookies, ${state.origins.length} origins.`,
  logged: false,
  work: async (session, input, { service }) => ({ result: await service.profiles.state(session, input) }),
});
