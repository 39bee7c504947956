import { hkdfSync, randomBytes, scrypt } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ServiceError } from '../errors.js';

/** The keys of the profile store, all derived from one secret: encryption, file names, and the stable API-key scope. */
export interface ProfileKeys {
  /** AES-256-GCM key of the profile files. */
  encryption: Buffer;
  /** HMAC key that turns owners and profile names into file names. */
  names: Buffer;
  /** HMAC key of the HTTP door's owner ids: stable across restarts and shared by instances with the same secret. */
  owners: Buffer;
}

const SALT = 'browser-session-mcp/profiles/v1';
/** scrypt cost: about 32 MiB and a tenth of a second, once at the first profile operation. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const MIN_SECRET_LENGTH = 16;

export interface SecretSource {
  /** --profile-secret / SVC_PROFILE_SECRET. */
  secret?: string;
  /** Read, or created with 0600 permissions, when no secret is given. */
  keyFile: string;
}

/** The store's keys: from the given secret, else from the key file (generated on first use). */
export async function loadProfileKeys(source: SecretSource): Promise<ProfileKeys> {
  const secret = source.secret ?? (await readOrCreateKeyFile(source.keyFile));
  if (secret.length < MIN_SECRET_LENGTH)
    throw new ServiceError(
      'invalid_argument',
      `The profile secret is shorter than ${MIN_SECRET_LENGTH} characters; use a long random one (e.g. openssl rand -base64 32).`,
    );
  const master = await new Promise<Buffer>((resolve, reject) =>
    scrypt(secret, SALT, 32, SCRYPT, (err, key) => (err ? reject(err) : resolve(key))),
  );
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), purpose, 32));
  return { encryption: derive('profile-encryption'), names: derive('profile-names'), owners: derive('api-key-owners') };
}

async function readOrCreateKeyFile(path: string): Promise<string> {
  const existing = await readKeyFile(path);
  if (existing !== undefined) return existing;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // Written whole under a temporary name, then linked into place: a second process either wins or reads the whole key.
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(`${randomBytes(32).toString('base64url')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  return (await readKeyFile(path))!;
}

async function readKeyFile(path: string): Promise<string | undefined> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (mode & 0o077)
    throw new ServiceError(
      'internal',
      `The profile key file ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it.`,
    );
  return (await readFile(path, 'utf8')).trim();
}
