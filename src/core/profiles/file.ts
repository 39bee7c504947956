import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { MAX_STORAGE_STATE_BYTES } from '../storage/schema.js';

/**
 * A profile file: a magic line, then a small header and the body, each sealed on its own with AES-256-GCM so a
 * listing reads headers only. Both parts are bound (as authenticated data) to the file's id, which is derived from
 * the owner and the name: a file copied into another key's place, or a header spliced onto another body, fails.
 *
 *   magic (8) | header length (u32 BE) | header: iv (12) ciphertext tag (16) | body: iv (12) ciphertext tag (16)
 */
export const MAGIC = Buffer.from('BSMPROF1');
const IV = 12;
const TAG = 16;
const SEALED_MIN = IV + TAG;
/** Headers are small JSON; a length beyond this is a damaged file, not a header to read. */
const MAX_HEADER = 64 * 1024;

/** The largest profile file read: the largest state, its header and the file's framing. */
export const MAX_PROFILE_FILE = MAX_STORAGE_STATE_BYTES + MAX_HEADER + 1024;

export class ProfileFileError extends Error {
  constructor(readonly reason: 'truncated' | 'tampered' | 'not_a_profile' | 'too_large') {
    super(reason);
  }
}

/**
 * Opens a profile file for reading if it is a regular file of at most MAX_PROFILE_FILE bytes (ProfileFileError
 * otherwise; ENOENT as it is). O_NONBLOCK: a FIFO put in its place would hold a thread of libuv's pool in open()
 * until a writer came (four such opens stalled every key's file access and shutdown); O_NOFOLLOW: no symlink to
 * elsewhere. Checked with fstat on what was opened, so nothing can be swapped in between.
 */
export async function openProfileFile(path: string): Promise<{ handle: FileHandle; size: number }> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new ProfileFileError('not_a_profile');
    throw err;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new ProfileFileError('not_a_profile');
    if (stats.size > MAX_PROFILE_FILE) throw new ProfileFileError('too_large');
    return { handle, size: stats.size };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/** A profile file's bytes, read through openProfileFile's checks. */
export async function readProfileFile(path: string): Promise<Buffer> {
  const { handle, size } = await openProfileFile(path);
  try {
    const bytes = Buffer.alloc(size);
    const { bytesRead } = await handle.read(bytes, 0, size, 0);
    return bytes.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function seal(key: Buffer, plain: Buffer, aad: Buffer): Buffer {
  const iv = randomBytes(IV);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

function unseal(key: Buffer, sealed: Buffer, aad: Buffer): Buffer {
  if (sealed.length < SEALED_MIN) throw new ProfileFileError('truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV));
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV, sealed.length - TAG)), decipher.final()]);
  } catch {
    throw new ProfileFileError('tampered');
  }
}

const aad = (fileId: string, part: string, extra: Buffer = Buffer.alloc(0)) =>
  Buffer.concat([MAGIC, Buffer.from(`\0${fileId}\0${part}\0`), extra]);

/** The file's bytes for this header and body. */
export function encodeProfile(key: Buffer, fileId: string, header: unknown, body: unknown): Buffer {
  const sealedHeader = seal(key, Buffer.from(JSON.stringify(header)), aad(fileId, 'header'));
  // The body's data includes the header's tag, so the two parts only verify together.
  const sealedBody = seal(key, Buffer.from(JSON.stringify(body)), aad(fileId, 'body', sealedHeader.subarray(-TAG)));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(sealedHeader.length);
  return Buffer.concat([MAGIC, length, sealedHeader, sealedBody]);
}

/** The header's length and sealed bytes from the first bytes of a file; throws ProfileFileError on a damaged start. */
function headerPart(start: Buffer): { sealed: Buffer; end: number } {
  if (start.length < MAGIC.length + 4) throw new ProfileFileError('truncated');
  if (!start.subarray(0, MAGIC.length).equals(MAGIC)) throw new ProfileFileError('not_a_profile');
  const length = start.readUInt32BE(MAGIC.length);
  if (length < SEALED_MIN || length > MAX_HEADER) throw new ProfileFileError('tampered');
  const end = MAGIC.length + 4 + length;
  if (start.length < end) throw new ProfileFileError('truncated');
  return { sealed: start.subarray(MAGIC.length + 4, end), end };
}

/** The decrypted header and body; a truncated or altered file throws ProfileFileError, never half a profile. */
export function decodeProfile(key: Buffer, fileId: string, bytes: Buffer): { header: unknown; body: unknown } {
  const { sealed, end } = headerPart(bytes);
  const header = unseal(key, sealed, aad(fileId, 'header'));
  const body = unseal(key, bytes.subarray(end), aad(fileId, 'body', sealed.subarray(-TAG)));
  return { header: JSON.parse(header.toString('utf8')), body: JSON.parse(body.toString('utf8')) };
}

/** The header alone, reading only the start of the file (listings). */
export async function readProfileHeader(key: Buffer, fileId: string, path: string): Promise<unknown> {
  const { handle } = await openProfileFile(path);
  try {
    const start = Buffer.alloc(MAGIC.length + 4);
    const { bytesRead } = await handle.read(start, 0, start.length, 0);
    if (bytesRead < start.length) throw new ProfileFileError('truncated');
    const length = Math.min(start.readUInt32BE(MAGIC.length), MAX_HEADER + 1);
    const whole = Buffer.alloc(start.length + length);
    const read = await handle.read(whole, 0, whole.length, 0);
    const { sealed } = headerPart(whole.subarray(0, read.bytesRead));
    return JSON.parse(unseal(key, sealed, aad(fileId, 'header')).toString('utf8'));
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `bytes` atomically: a temporary file in the same directory, flushed to disk, renamed over
 * the old one, then the directory flushed so the rename survives a crash. Readers see the old file or the new one.
 */
export async function writeAtomically(path: string, bytes: Buffer): Promise<void> {
  const temp = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  await syncDirectory(dirname(path));
}

export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (err) {
    // Some file systems cannot fsync a directory (EINVAL/EISDIR on a few network mounts); the rename itself stands.
    if (!['EINVAL', 'EISDIR', 'EPERM'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
  } finally {
    await handle.close();
  }
}
