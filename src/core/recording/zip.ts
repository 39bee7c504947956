import { promisify } from 'node:util';
import { crc32, deflateRaw as deflateRawCallback, inflateRaw as inflateRawCallback } from 'node:zlib';

// zlib's callback forms run in libuv's thread pool: a big trace is (de)compressed without holding the event loop.
const deflateRaw = promisify(deflateRawCallback);
const inflateRaw = promisify(inflateRawCallback);

/** One file of a zip archive, uncompressed. */
export interface ZipEntry {
  name: string;
  data: Buffer;
}

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL = 0x06054b50;
const STORED = 0;
const DEFLATED = 8;

/**
 * The files of a zip archive (stored or deflated entries, no zip64: a trace chunk is far below 4 GiB). Reads the
 * central directory, as unzip does, so entries written with data descriptors (Playwright's writer) are read right.
 */
export async function readZip(zip: Buffer): Promise<ZipEntry[]> {
  const end = findEndOfCentral(zip);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries: Array<Promise<ZipEntry>> = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== CENTRAL_HEADER) throw new Error('zip: bad central directory');
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localOffset = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if (zip.readUInt32LE(localOffset) !== LOCAL_HEADER) throw new Error(`zip: bad local header for ${name}`);
    const dataStart = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const raw = zip.subarray(dataStart, dataStart + compressedSize);
    if (method !== STORED && method !== DEFLATED) throw new Error(`zip: unsupported method ${method} for ${name}`);
    entries.push(method === STORED ? Promise.resolve({ name, data: Buffer.from(raw) }) : inflateRaw(raw).then((data) => ({ name, data })));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return Promise.all(entries);
}

function findEndOfCentral(zip: Buffer): number {
  // The record is 22 bytes plus a comment of up to 64 KiB, at the very end.
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) if (zip.readUInt32LE(at) === END_OF_CENTRAL) return at;
  throw new Error('zip: no end of central directory (not a zip file)');
}

/** A zip archive of `entries`, each deflated (images, already compressed, are stored). */
export async function writeZip(entries: readonly ZipEntry[]): Promise<Buffer> {
  const stored = (name: string) => /\.(jpe?g|png|webm)$/i.test(name);
  const bodies = await Promise.all(entries.map(({ name, data }) => (stored(name) ? data : deflateRaw(data))));
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [i, { name, data }] of entries.entries()) {
    const nameBytes = Buffer.from(name, 'utf8');
    const store = stored(name);
    const body = bodies[i]!;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_HEADER, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(store ? STORED : DEFLATED, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(CENTRAL_HEADER, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(0x0800, 8);
    header.writeUInt16LE(store ? STORED : DEFLATED, 10);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(body.length, 20);
    header.writeUInt32LE(data.length, 24);
    header.writeUInt16LE(nameBytes.length, 28);
    header.writeUInt32LE(offset, 42);
    parts.push(local, nameBytes, body);
    central.push(header, nameBytes);
    offset += 30 + nameBytes.length + body.length;
  }
  const centralSize = central.reduce((sum, part) => sum + part.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, ...central, end]);
}
