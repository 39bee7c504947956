import { SaveProfileRequest, StateRequest } from '../core/state/index.js';
import { ok, operationBody } from './envelope.js';
import { route, type Route } from './route.js';
import { DeleteProfileRequest, EndSessionResponse, ProfileListResponse, SaveProfileResponse, StateResponse } from './schemas.js';

/** Storage state out of a session, and the caller's named profiles (docs/profiles.md). */
export const profileRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/v1/sessions/{id}/state',
    operationId: 'SessionState',
    summary: "The session's storage state now (Playwright's shape: cookies, origins with localStorage; IndexedDB with indexedDB: true).",
    body: StateRequest,
    response: StateResponse,
    auth: true,
    handle: async ({ service, owner, params, body, ctx }) => operationBody(await service.sessionState(owner, params.id!, body, ctx)),
  }),
  route({
    method: 'POST',
    path: '/v1/sessions/{id}/saveProfile',
    operationId: 'ProfileSave',
    summary: "Save the session's state as a named profile of the caller's key (default: the one it started from); the last save wins.",
    body: SaveProfileRequest,
    response: SaveProfileResponse,
    auth: true,
    handle: async ({ service, owner, params, body, ctx }) => operationBody(await service.saveProfile(owner, params.id!, body, ctx)),
  }),
  route({
    method: 'GET',
    path: '/v1/profiles',
    operationId: 'ProfileList',
    summary: "The caller's profiles: names, save times and sizes, never their cookies or storage.",
    response: ProfileListResponse,
    auth: true,
    handle: async ({ service, owner }) => ok(await service.listProfiles(owner)),
  }),
  route({
    method: 'POST',
    path: '/v1/profiles/delete',
    operationId: 'ProfileDelete',
    summary: "Delete one of the caller's profiles by name.",
    body: DeleteProfileRequest,
    response: EndSessionResponse,
    auth: true,
    handle: async ({ service, owner, body }) => {
      await service.deleteProfile(owner, body.name);
      return { success: true };
    },
  }),
];
