import { z } from 'zod';
import { ServiceError } from '../errors.js';
import type { SessionOptions } from '../session/options.js';
import type { Session } from '../session/session.js';
import { stateKey } from '../page/state.js';
import { ProfileName, type ProfileInfo, type ProfileList, type ProfileStore } from './profiles.js';
import { parseInput } from '../validation.js';
import { parseStorageState, type StorageState } from '../storage/schema.js';
import { readStorageState, type StateRequest } from '../storage/session-state.js';

/**
 * A profile name as the doors take it, its characters said in words (a pattern costs tools/list three times the
 * tokens); the core checks it against ProfileName.
 */
export const ProfileNameField = z.string().min(1).max(64).describe('letters, digits, spaces, . _ @ -');

/** What session_start takes from this feature: two fields of SessionOptions (src/core/session/options.ts). */
export type SessionStart = Pick<SessionOptions, 'storageState' | 'profile'>;

export const SaveProfileRequest = z
  .object({ name: ProfileNameField.optional().describe('letters, digits, spaces, . _ @ -; default: its profile') })
  .strict();
export type SaveProfileRequest = z.infer<typeof SaveProfileRequest>;

export const EndSessionRequest = z.object({ saveProfile: z.boolean().optional().describe('save to its profile first') }).strict();
export type EndSessionRequest = z.infer<typeof EndSessionRequest>;

/** The profile a session was started from: session_end {saveProfile} and profile_save without a name write to it. */
const STARTED_FROM = stateKey<string | undefined>('profile.startedFrom', () => undefined);

/** Storage state in and out of sessions, and the named profiles of each owner when a store is configured. */
export class SessionProfiles {
  constructor(readonly store: ProfileStore | undefined) {}

  /** The HMAC key of stable API-key scopes when profiles are kept (they outlive the process); undefined otherwise. */
  async ownerSecret(): Promise<Buffer | undefined> {
    return this.store ? (await this.store.profileKeys()).owners : undefined;
  }

  /** The state a new session starts from (validated), and the profile it came from. */
  async initial(owner: string, start: SessionStart): Promise<{ storageState?: StorageState; profile?: string }> {
    if (start.storageState !== undefined && start.profile !== undefined)
      throw new ServiceError('invalid_argument', 'Give storageState or profile, not both.');
    if (start.storageState !== undefined) return { storageState: parseStorageState(start.storageState) };
    if (start.profile === undefined) return {};
    const { state } = await this.required().load(owner, checkName(start.profile, 'profile'));
    return { storageState: state, profile: start.profile };
  }

  startedFrom(session: Session, profile: string | undefined): void {
    session.state.set(STARTED_FROM, profile);
  }

  /** The session's cookies and storage now. */
  state(session: Session, request: StateRequest): Promise<StorageState> {
    return readStorageState(session.context, request);
  }

  /** Saves the session's state under `name`, or under the profile it started from. */
  async save(owner: string, session: Session, request: SaveProfileRequest): Promise<ProfileInfo> {
    const store = this.required();
    const name = request.name === undefined ? session.state.get(STARTED_FROM) : checkName(request.name, 'name');
    if (name === undefined)
      throw new ServiceError('invalid_argument', 'This session was not started from a profile: give the name to save it under.');
    // A later save without a name, and session_end {saveProfile}, go to the profile last saved.
    session.state.set(STARTED_FROM, name);
    return store.save(owner, name, await readStorageState(session.context));
  }

  /** Checked before session_end saves, so a session that cannot be saved is not ended either. */
  checkSaveOnEnd(session: Session): void {
    this.required();
    if (session.state.get(STARTED_FROM) === undefined)
      throw new ServiceError(
        'invalid_argument',
        'saveProfile needs a session started from a profile (or saved under a name once); save it under a name first.',
      );
  }

  list(owner: string): Promise<ProfileList> {
    return this.required().list(owner);
  }

  delete(owner: string, name: string): Promise<void> {
    return this.required().delete(owner, checkName(name, 'name'));
  }

  private required(): ProfileStore {
    if (!this.store)
      throw new ServiceError(
        'profiles_not_configured',
        'Named profiles are off on this server: start it with --profile-dir DIR to keep them (its key is generated at first use).',
      );
    return this.store;
  }
}

function checkName(name: string, field: string): string {
  return parseInput(z.object({ [field]: ProfileName }), { [field]: name }, field)[field] as string;
}
