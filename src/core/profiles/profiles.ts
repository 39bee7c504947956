import { createHmac } from 'node:crypto';
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ServiceError } from '../errors.js';
import {
  decodeProfile,
  encodeProfile,
  ProfileFileError,
  readProfileFile,
  readProfileHeader,
  syncDirectory,
  writeAtomically,
} from './file.js';
import { parseStorageState, type StorageState } from '../storage/schema.js';
import { loadProfileKeys, type ProfileKeys } from './secret.js';
import { stateSummary } from '../storage/session-state.js';

/** Most profiles one API key may keep. */
export const MAX_PROFILES_PER_KEY = 100;

export const ProfileName = z
  .string()
  // No space at the end: "a " beside "a" would be two profiles no one can tell apart in a listing.
  .regex(
    /^[A-Za-z0-9](?:[A-Za-z0-9 ._@-]{0,62}[A-Za-z0-9._@-])?$/,
    'expected 1-64 letters, digits, spaces or . _ @ -, starting with a letter or digit and not ending with a space',
  )
  .describe('Profile name, e.g. "work".');

export const ProfileInfo = z
  .object({
    name: z.string(),
    savedAt: z.string(),
    cookies: z.number().int(),
    origins: z.number().int(),
    bytes: z.number().int().describe('Size of the saved state as JSON.'),
  })
  .strict();
export type ProfileInfo = z.infer<typeof ProfileInfo>;

export const ProfileList = z
  .object({
    profiles: z.array(ProfileInfo),
    unreadable: z.number().int().optional().describe('Files of yours that failed their integrity check; absent when none.'),
  })
  .strict();
export type ProfileList = z.infer<typeof ProfileList>;

export interface ProfileStoreOptions {
  /** Directory of the profile files (one subdirectory per API key). */
  dir: string;
  /** The secret the keys derive from; unset: the key file. */
  secret?: string;
  /** Read or generated (0600) when no secret is given. */
  keyFile: string;
  logger: Logger;
}

const EXTENSION = '.profile';
/** Stored runs (replay, cached agent runs) sit in this folder of each owner's, one sealed file each. */
const RUNS_DIR = 'runs';
export const RUN_EXTENSION = '.run';

/**
 * Named storage states per owner (API key), encrypted at rest. Files are named by HMACs of the owner and the name,
 * so neither appears on disk; a save replaces the file atomically (the last writer wins, never a mix).
 */
export class ProfileStore {
  private keys: Promise<ProfileKeys> | undefined;

  constructor(private readonly options: ProfileStoreOptions) {}

  get dir(): string {
    return this.options.dir;
  }

  /** The keys, derived at the first profile operation: nothing is read or written before one is asked for. */
  async profileKeys(): Promise<ProfileKeys> {
    this.keys ??= loadProfileKeys(this.options).catch((err: unknown) => {
      this.keys = undefined;
      this.options.logger.error({ err }, 'the profile store cannot derive its key');
      throw new ServiceError(
        'profiles_not_configured',
        `The server's profile store cannot be opened (its secret or key file); the server log says why.`,
        { cause: err },
      );
    });
    return this.keys;
  }

  async save(owner: string, name: string, state: StorageState): Promise<ProfileInfo> {
    const keys = await this.profileKeys();
    const { dir, file, fileId } = this.place(keys, owner, name);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (!(await exists(file)) && (await this.count(dir)) >= MAX_PROFILES_PER_KEY)
      throw new ServiceError(
        'invalid_argument',
        `You already have ${MAX_PROFILES_PER_KEY} profiles, the most one API key may keep; delete one first.`,
      );
    const info: ProfileInfo = { name, savedAt: new Date().toISOString(), ...stateSummary(state) };
    await writeAtomically(file, encodeProfile(keys.encryption, fileId, info, state));
    return info;
  }

  async load(owner: string, name: string): Promise<{ info: ProfileInfo; state: StorageState }> {
    const keys = await this.profileKeys();
    const { file, fileId } = this.place(keys, owner, name);
    let bytes: Buffer;
    try {
      bytes = await readProfileFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(name);
      if (err instanceof ProfileFileError) throw unreadable(name, err);
      throw err;
    }
    try {
      const { header, body } = decodeProfile(keys.encryption, fileId, bytes);
      return { info: ProfileInfo.parse(header), state: parseStorageState(body, 'profile') };
    } catch (err) {
      throw unreadable(name, err);
    }
  }

  async list(owner: string): Promise<ProfileList> {
    const keys = await this.profileKeys();
    const dir = this.ownerDir(keys, owner);
    const profiles: ProfileInfo[] = [];
    let unreadableCount = 0;
    for (const entry of await filesOf(dir)) {
      const fileId = entry.slice(0, -EXTENSION.length);
      try {
        profiles.push(ProfileInfo.parse(await readProfileHeader(keys.encryption, fileId, join(dir, entry))));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        unreadableCount++;
        this.options.logger.warn({ file: join(dir, entry), reason: (err as Error).message }, 'a profile file failed its check');
      }
    }
    profiles.sort((a, b) => a.name.localeCompare(b.name));
    return { profiles, ...(unreadableCount ? { unreadable: unreadableCount } : {}) };
  }

  /** Deletes by name without reading the file, so a damaged profile can be removed too. */
  async delete(owner: string, name: string): Promise<void> {
    const keys = await this.profileKeys();
    const { dir, file } = this.place(keys, owner, name);
    try {
      await unlink(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(name);
      throw err;
    }
    await syncDirectory(dir);
  }

  /** The path of a profile's file (tests check what is on disk). */
  async fileOf(owner: string, name: string): Promise<string> {
    return this.place(await this.profileKeys(), owner, name).file;
  }

  /**
   * Where a stored run of `owner` is kept (docs/replay.md), beside the owner's profiles, and the key it is sealed with:
   * the file named by an HMAC of the owner and the run's id, so neither appears on disk.
   */
  async runFile(owner: string, id: string): Promise<{ dir: string; file: string; fileId: string; key: Buffer }> {
    const keys = await this.profileKeys();
    const dir = join(this.ownerDir(keys, owner), RUNS_DIR);
    const fileId = hmacHex(keys.names, `run\0${owner}\0${id}`);
    return { dir, file: join(dir, fileId + RUN_EXTENSION), fileId, key: keys.encryption };
  }

  private ownerDir(keys: ProfileKeys, owner: string): string {
    return join(this.options.dir, hmacHex(keys.names, `owner\0${owner}`));
  }

  private place(keys: ProfileKeys, owner: string, name: string): { dir: string; file: string; fileId: string } {
    const dir = this.ownerDir(keys, owner);
    const fileId = hmacHex(keys.names, `profile\0${owner}\0${name}`);
    return { dir, file: join(dir, fileId + EXTENSION), fileId };
  }

  private async count(dir: string): Promise<number> {
    return (await filesOf(dir)).length;
  }
}

function hmacHex(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

async function filesOf(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((entry) => entry.endsWith(EXTENSION));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The same answer whether the name was never saved or belongs to another key: names cannot be probed. */
export function notFound(name: string): ServiceError {
  return new ServiceError('profile_not_found', `No profile named "${name}". Names are per API key; list yours to see them.`);
}

function unreadable(name: string, err: unknown): ServiceError {
  const reason = err instanceof ProfileFileError ? err.reason : 'invalid';
  const why = {
    truncated: 'its file is truncated',
    tampered: 'its file failed the integrity check (altered, or written under another --profile-secret)',
    not_a_profile: 'its file is not a profile file',
    too_large: 'its file is larger than any profile',
    invalid: 'its content is not a valid storage state',
  }[reason];
  return new ServiceError(
    'profile_unreadable',
    `Profile "${name}" cannot be loaded: ${why}. Nothing of it was used; delete it and save it again.`,
    { details: { reason } },
  );
}
