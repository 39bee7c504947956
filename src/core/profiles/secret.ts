import { hkdfSync, randomBytes, scrypt } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ServiceError } from '../errors.js';

/**
 * The keys of the profile store. Encryption derives from the secret; the naming keys come from the naming-key file
 * in the profile directory, so a changed secret still finds the files (then unreadable, and deletable by name).
 */
export interface ProfileKeys {
  /** AES-256-GCM key of the profile files (from the secret). */
  encryption: Buffer;
  /** HMAC key that turns owners and profile names into file names (from the naming-key file). */
  names: Buffer;
  /** HMAC key of the HTTP door's owner ids (from the naming-key file): stable across restarts and secret changes. */
  owners: Buffer;
}

/** The naming-key file, in the profile directory beside the per-key folders. */
export const NAMING_KEY_FILE = 'naming.key';
/** A per-key folder as the store names it: an HMAC in hex. */
const OWNER_FOLDER = /^[0-9a-f]{64}$/;

const SALT = 'browser-session-mcp/profiles/v1';
/** scrypt cost: about 32 MiB and a tenth of a second, once at the first profile operation. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const MIN_SECRET_LENGTH = 16;

export interface SecretSource {
  /** --profile-secret / SVC_PROFILE_SECRET. */
  secret?: string;
  /** Read, or created with 0600 permissions, when no secret is given. */
  keyFile: string;
  /** The profile directory, where the naming-key file is kept. */
  dir: string;
}

/** The store's keys: encryption from the given secret (else the key file), names from the naming-key file. */
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
  // Before the naming-key file existed, the naming keys derived from the secret: a folder of that layout keeps them.
  const naming = await readOrCreateNamingKeys(source.dir, () => ({ names: derive('profile-names'), owners: derive('api-key-owners') }));
  return { encryption: derive('profile-encryption'), ...naming };
}

type NamingKeys = Pick<ProfileKeys, 'names' | 'owners'>;

/**
 * The naming keys of `dir`: read from its naming-key file, or written there at first use (0600) as random keys, or as
 * `legacy()` when per-key folders already exist without the file (an upgraded deployment keeps its paths).
 */
async function readOrCreateNamingKeys(dir: string, legacy: () => NamingKeys): Promise<NamingKeys> {
  const path = join(dir, NAMING_KEY_FILE);
  let text = await readKeyFile(path);
  if (text === undefined) {
    const keys = (await hasOwnerFolders(dir)) ? legacy() : { names: randomBytes(32), owners: randomBytes(32) };
    text = await createOnce(path, `names ${keys.names.toString('base64url')}\nowners ${keys.owners.toString('base64url')}\n`);
  }
  const fields = new Map(text.split('\n').map((line) => line.split(' ', 2) as [string, string]));
  const names = Buffer.from(fields.get('names') ?? '', 'base64url');
  const owners = Buffer.from(fields.get('owners') ?? '', 'base64url');
  if (names.length !== 32 || owners.length !== 32)
    throw new ServiceError('internal', `The profile naming-key file ${path} is damaged (expected its "names" and "owners" lines).`);
  return { names, owners };
}

async function hasOwnerFolders(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).some((entry) => OWNER_FOLDER.test(entry));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

function readOrCreateKeyFile(path: string): Promise<string> {
  return readKeyFile(path).then((existing) => existing ?? createOnce(path, `${randomBytes(32).toString('base64url')}\n`));
}

/** Writes `content` to `path` (0600) unless another process did first; answers what the file holds (trimmed). */
async function createOnce(path: string, content: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // Written whole under a temporary name, then linked into place: a second process either wins or reads the whole key.
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(content);
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
