export {
  MAX_COOKIES,
  MAX_ORIGINS,
  MAX_STORAGE_STATE_BYTES,
  parseStorageState,
  StorageCookie,
  StorageOrigin,
  StorageState,
  stateBytes,
} from '../storage/schema.js';
export { readStorageState, StateRequest, stateSummary } from '../storage/session-state.js';
export { MAX_PROFILES_PER_KEY, ProfileInfo, ProfileList, ProfileName, ProfileStore, type ProfileStoreOptions } from './profiles.js';
export { EndSessionRequest, ProfileNameField, SaveProfileRequest, SessionProfiles, type SessionStart } from './start.js';
export { MAX_RUNS_PER_KEY, StoredRuns } from './runs.js';
