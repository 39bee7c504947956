import type { SessionSecrets } from './secrets.js';
import type { ZipEntry } from './zip.js';

/** Headers whose values are credentials: shown as `[redacted]` in the trace's network log. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-svc-api-key', 'x-api-key']);
const REDACTED = '[redacted]';
/** Entries that are JSON lines: the action log, the network log, the stacks. */
const JSON_LINES = /\.(trace|network|stacks)$/;
/** Entries kept byte for byte: images and video hold no text to search (their pixels are out of scope). */
const BINARY = /\.(jpe?g|png|webp|gif|webm|woff2?|ttf|ico)$/i;

/** The longest the scrub holds the event loop before giving other sessions a turn. */
const SLICE_MS = 20;

/**
 * A trace with nothing secret in it. Password inputs' values are blanked in every DOM snapshot (and added to
 * `secrets`, so the fill that typed them and the form that posted them are masked too); then every secret is masked
 * in every string of the JSON entries (action parameters, logs, snapshots, URLs, inline request bodies) and in the
 * bytes of the other text entries (request and response bodies), as typed and in its encodings (URL-encoded, as a
 * browser form-encodes it, HTML-escaped); credential headers and cookies are redacted from the network log.
 *
 * A trace of a long session on big pages is tens of megabytes of JSON lines, nearly all DOM snapshots with nothing to
 * mask: a line is parsed only when its text holds what a change needs (a secret as JSON writes it, as typed or encoded,
 * a password input, a network entry), the others are kept as they are, and the work gives the event loop a turn every
 * SLICE_MS.
 */
export async function scrubTrace(entries: readonly ZipEntry[], secrets: SessionSecrets): Promise<ZipEntry[]> {
  const yieldNow = slicer();
  const lines = new Map<string, Line[]>();
  for (const entry of entries) if (JSON_LINES.test(entry.name)) lines.set(entry.name, splitLines(entry.data));
  // First every password in any snapshot, so that each is masked wherever else it appears.
  for (const entryLines of lines.values())
    for (const line of entryLines) {
      await yieldNow();
      if (line.bytes.indexOf(FRAME_SNAPSHOT) < 0 || !/password/i.test(line.bytes.toString('latin1'))) continue;
      line.event = parse(line.bytes);
      if (line.event !== undefined) blankPasswords(line.event, secrets);
    }
  // A secret as JSON writes it inside a string (a quote in it is \", so the raw forms alone would miss it), and as
  // typed or encoded (a URL, the bytes of a line that is not JSON).
  const forms = secrets.encodedForms();
  const needles = [...new Set([...secrets.jsonForms(), ...forms.map(([form]) => form.toString('utf8'))])].map((form) => Buffer.from(form));
  const out: ZipEntry[] = [];
  for (const { name, data } of entries) {
    await yieldNow();
    const entryLines = lines.get(name);
    if (!entryLines) {
      out.push({ name, data: BINARY.test(name) || !forms.length ? data : replaceAll(data, forms) });
      continue;
    }
    const parts: Buffer[] = [];
    let changed = false;
    for (const line of entryLines) {
      await yieldNow();
      const touched =
        line.event !== undefined || line.bytes.indexOf(RESOURCE_SNAPSHOT) >= 0 || needles.some((needle) => line.bytes.indexOf(needle) >= 0);
      const event = touched ? (line.event ?? parse(line.bytes)) : undefined;
      if (!touched) parts.push(line.bytes, NEWLINE);
      else if (event === undefined) parts.push(replaceAll(line.bytes, forms), NEWLINE);
      else parts.push(Buffer.from(JSON.stringify(secrets.maskDeep(redactCredentials(event)))), NEWLINE);
      changed ||= touched;
    }
    // Most entries have nothing to mask: those keep their bytes (a copy of ten megabytes holds the loop for tens of ms).
    out.push({ name, data: changed ? Buffer.concat(parts) : data });
  }
  return out;
}

/** What the text of the events this scrub may change holds (parsing tells for sure). */
const FRAME_SNAPSHOT = Buffer.from('"frame-snapshot"');
const RESOURCE_SNAPSHOT = Buffer.from('"resource-snapshot"');
const NEWLINE = Buffer.from('\n');

interface Line {
  bytes: Buffer;
  /** The line parsed, once something needed it. */
  event?: unknown;
}

/** The non-blank lines of a JSON-lines entry, as views of its bytes (no copy). */
function splitLines(data: Buffer): Line[] {
  const lines: Line[] = [];
  for (let from = 0; from < data.length;) {
    const end = data.indexOf(0x0a, from);
    const bytes = data.subarray(from, end < 0 ? data.length : end);
    if (bytes.some((byte) => byte > 0x20)) lines.push({ bytes });
    from = end < 0 ? data.length : end + 1;
  }
  return lines;
}

/** One line's JSON value; undefined when it is not JSON, so its bytes are masked as other text's are. */
function parse(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** A function that awaits a turn of the event loop once SLICE_MS have passed since the last one. */
function slicer(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

interface FrameSnapshotEvent {
  type: 'frame-snapshot';
  snapshot: { html: unknown };
}

/** Snapshot nodes are `[tag, attributes, ...children]`, or `[[snapshotIndex, nodeIndex]]` references to earlier ones. */
function blankPasswords(event: unknown, secrets: SessionSecrets): void {
  if (!isObject(event) || event.type !== 'frame-snapshot') return;
  const walk = (node: unknown): void => {
    if (!Array.isArray(node) || typeof node[0] !== 'string') return;
    const attributes = node[1];
    if (node[0].toUpperCase() === 'INPUT' && isObject(attributes) && String(attributes.type ?? '').toLowerCase() === 'password') {
      const value = attributes.__playwright_value_;
      if (typeof value === 'string' && value) {
        secrets.addPassword(value);
        attributes.__playwright_value_ = '';
      }
      if (typeof attributes.value === 'string' && attributes.value) {
        secrets.addPassword(attributes.value);
        attributes.value = '';
      }
    }
    for (const child of node.slice(2)) walk(child);
  };
  walk((event as unknown as FrameSnapshotEvent).snapshot?.html);
}

function redactCredentials(event: unknown): unknown {
  if (!isObject(event) || event.type !== 'resource-snapshot' || !isObject(event.snapshot)) return event;
  const { request, response } = event.snapshot as { request?: unknown; response?: unknown };
  for (const message of [request, response]) {
    if (!isObject(message)) continue;
    if (Array.isArray(message.headers))
      message.headers = message.headers.map((header: unknown) =>
        isObject(header) && CREDENTIAL_HEADERS.has(String(header.name).toLowerCase()) ? { ...header, value: REDACTED } : header,
      );
    if (Array.isArray(message.cookies))
      message.cookies = message.cookies.map((cookie: unknown) => (isObject(cookie) ? { ...cookie, value: REDACTED } : cookie));
  }
  return event;
}

function replaceAll(data: Buffer, forms: Array<[Buffer, Buffer]>): Buffer {
  let out = data;
  for (const [secret, label] of forms) {
    if (out.indexOf(secret) < 0) continue;
    const parts: Buffer[] = [];
    let from = 0;
    for (let at = out.indexOf(secret); at >= 0; at = out.indexOf(secret, from)) {
      parts.push(out.subarray(from, at), label);
      from = at + secret.length;
    }
    parts.push(out.subarray(from));
    out = Buffer.concat(parts);
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
