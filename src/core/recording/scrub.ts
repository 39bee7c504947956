import { reformattedPattern } from '../variables.js';
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
 * Screencast frames swapped from this long before a secret was first typed are dropped: the browser's clock (a remote
 * host's) may differ a little from ours, and typing starts before the call that types returns.
 */
export const FRAME_MARGIN_MS = 2_000;
/** Our own screencast frames, taken with the session's secrets masked (trace.ts): kept whenever they were taken. */
export const MASKED_FRAME_SUFFIX = '-masked.jpeg';

/**
 * A trace with nothing secret in it. Password inputs' values are blanked in every DOM snapshot (and added to
 * `secrets`, so the fill that typed them and the form that posted them are masked too); then every secret is masked
 * in every string of the JSON entries (action parameters, logs, snapshots, URLs, inline request bodies) and in the
 * bytes of the other text entries (request and response bodies), as typed and in its encodings (URL-encoded, as a
 * browser form-encodes it, HTML-escaped); credential headers and cookies are redacted from the network log.
 *
 * A secret is found reformatted too (`4111 1111 1111 1111`, variables.ts). Pictures cannot be searched: the browser's
 * screencast frames swapped since a secret was first typed (`secrets.typedAt`, less FRAME_MARGIN_MS) are dropped, with
 * their images; the frames the recorder took itself with the secrets masked stay (trace.ts).
 *
 * A trace of a long session on big pages is tens of megabytes of JSON lines, nearly all DOM snapshots with nothing to
 * mask: a line is parsed only when its text holds what a change needs (a secret as JSON writes it, as typed, encoded or
 * reformatted, a password input, a network entry, a screencast frame to drop), the others are kept as they are, and the
 * work gives the event loop a turn every SLICE_MS.
 */
export async function scrubTrace(entries: readonly ZipEntry[], secrets: SessionSecrets): Promise<ZipEntry[]> {
  const yieldNow = slicer();
  const lines = new Map<string, Line[]>();
  for (const entry of entries) if (JSON_LINES.test(entry.name)) lines.set(entry.name, splitLines(entry.data));
  const cutoff = secrets.typedAt === undefined ? undefined : secrets.typedAt - FRAME_MARGIN_MS;
  /** Images of the screencast frames dropped. */
  const dropped = new Set<string>();
  // First every password in any snapshot, so that each is masked wherever else it appears; and the frames to drop.
  for (const entryLines of lines.values()) {
    let clock: Clock | undefined;
    for (const line of entryLines) {
      await yieldNow();
      if (clock === undefined && line.bytes.indexOf(CONTEXT_OPTIONS) >= 0) clock = clockOf(parse(line.bytes));
      if (cutoff !== undefined && line.bytes.indexOf(SCREENCAST_FRAME) >= 0) {
        const frame = parse(line.bytes);
        if (isObject(frame) && frame.type === 'screencast-frame' && shownAfter(frame, cutoff, clock)) {
          line.drop = true;
          if (typeof frame.file === 'string') dropped.add(frame.file);
          if (typeof frame.sha1 === 'string') dropped.add(`resources/${frame.sha1}`);
        }
        continue;
      }
      if (line.bytes.indexOf(FRAME_SNAPSHOT) < 0) continue;
      // A snapshot taken once a secret was typed may show it split over elements (a digit each): its text is searched whole.
      const split = cutoff !== undefined && secrets.size > 0 && snapshotAfter(line.bytes, cutoff);
      if (!split && !/password/i.test(line.bytes.toString('latin1'))) continue;
      line.event = parse(line.bytes);
      if (line.event !== undefined) blankPasswords(line.event, secrets);
      if (line.event !== undefined && split) maskSplitText(line.event, secrets);
    }
  }
  // A secret as JSON writes it inside a string (a quote in it is \", so the raw forms alone would miss it), and as
  // typed or encoded (a URL, the bytes of a line that is not JSON).
  const forms = secrets.encodedForms();
  const patterns = secrets.bytePatterns();
  const needles = [...new Set([...secrets.jsonForms(), ...forms.map(([form]) => form.toString('utf8'))])].map((form) => Buffer.from(form));
  const out: ZipEntry[] = [];
  for (const { name, data } of entries) {
    await yieldNow();
    if (dropped.has(name)) continue;
    const entryLines = lines.get(name);
    if (!entryLines) {
      out.push({ name, data: BINARY.test(name) || !forms.length ? data : replaceReformatted(replaceAll(data, forms), patterns) });
      continue;
    }
    const parts: Buffer[] = [];
    let changed = false;
    for (const line of entryLines) {
      await yieldNow();
      if (line.drop) {
        changed = true;
        continue;
      }
      const touched =
        line.event !== undefined ||
        line.bytes.indexOf(RESOURCE_SNAPSHOT) >= 0 ||
        needles.some((needle) => line.bytes.indexOf(needle) >= 0) ||
        holdsReformatted(line.bytes, patterns);
      const event = touched ? (line.event ?? parse(line.bytes)) : undefined;
      if (!touched) parts.push(line.bytes, NEWLINE);
      else if (event === undefined) parts.push(replaceReformatted(replaceAll(line.bytes, forms), patterns), NEWLINE);
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
const SCREENCAST_FRAME = Buffer.from('"screencast-frame"');
const CONTEXT_OPTIONS = Buffer.from('"context-options"');
const NEWLINE = Buffer.from('\n');

interface Line {
  bytes: Buffer;
  /** The line parsed, once something needed it. */
  event?: unknown;
  /** A screencast frame left out. */
  drop?: boolean;
}

/** A trace file's clock: the wall time (ms since the epoch) at one of its monotonic times. */
interface Clock {
  wallTime: number;
  monotonicTime: number;
}

function clockOf(event: unknown): Clock | undefined {
  if (!isObject(event) || typeof event.wallTime !== 'number' || typeof event.monotonicTime !== 'number') return undefined;
  return { wallTime: event.wallTime, monotonicTime: event.monotonicTime };
}

/** Whether a browser screencast frame was swapped at `cutoff` or later (or when, no one can tell); ours never are. */
function shownAfter(frame: Record<string, unknown>, cutoff: number, clock: Clock | undefined): boolean {
  if (typeof frame.file === 'string' && frame.file.endsWith(MASKED_FRAME_SUFFIX)) return false;
  if (typeof frame.frameSwapWallTime === 'number') return frame.frameSwapWallTime >= cutoff;
  if (clock && typeof frame.timestamp === 'number') return clock.wallTime + (frame.timestamp - clock.monotonicTime) >= cutoff;
  return true;
}

const WALL_TIME = Buffer.from('"wallTime":');

/** Whether a DOM snapshot was taken at `cutoff` or later (its `wallTime`, near the line's end), or when, no one can tell. */
function snapshotAfter(bytes: Buffer, cutoff: number): boolean {
  const at = bytes.lastIndexOf(WALL_TIME);
  if (at < 0) return true;
  const time = Number(/^\d+(\.\d+)?/.exec(bytes.subarray(at + WALL_TIME.length, at + WALL_TIME.length + 24).toString('latin1'))?.[0]);
  return !Number.isFinite(time) || time >= cutoff;
}

/**
 * Masks the secrets in a DOM snapshot's text as a page shows it, joined over its text nodes: a secret written a digit
 * per element (`<b>4</b><b>1</b>…`) is no string of its own. The first text node of a match takes the label, the
 * others lose their part of it.
 */
function maskSplitText(event: unknown, secrets: SessionSecrets): void {
  if (!isObject(event) || event.type !== 'frame-snapshot') return;
  const texts: Array<{ node: unknown[]; index: number; at: number }> = [];
  let all = '';
  const walk = (node: unknown): void => {
    if (!Array.isArray(node) || typeof node[0] !== 'string') return;
    for (let index = 2; index < node.length; index++) {
      const child: unknown = node[index];
      if (typeof child !== 'string') walk(child);
      else {
        texts.push({ node, index, at: all.length });
        all += child;
      }
    }
  };
  walk((event as unknown as FrameSnapshotEvent).snapshot?.html);
  if (texts.length < 2) return;
  /** The cuts per text node, by its place in `texts`: [from, to, label], in the node's own offsets. */
  const cuts = new Map<number, Array<[number, number, string]>>();
  for (const [value, label] of secrets.entries()) {
    const pattern = reformattedPattern(value);
    if (!pattern) continue;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(all); match; match = pattern.exec(all)) {
      const start = match.index;
      const end = start + match[0].length;
      let first = true;
      for (const [place, { node, index, at }] of texts.entries()) {
        const length = (node[index] as string).length;
        if (at + length <= start || at >= end) continue;
        const list = cuts.get(place) ?? [];
        list.push([Math.max(0, start - at), Math.min(length, end - at), first ? label : '']);
        cuts.set(place, list);
        first = false;
      }
    }
  }
  for (const [place, list] of cuts) {
    const { node, index } = texts[place]!;
    let text = node[index] as string;
    for (const [from, to, label] of list.sort((a, b) => b[0] - a[0])) text = text.slice(0, from) + label + text.slice(to);
    node[index] = text;
  }
}

/** Whether the bytes hold a secret reformatted (a separator between its characters, or one taken out). */
function holdsReformatted(bytes: Buffer, patterns: Array<[RegExp, string]>): boolean {
  if (!patterns.length) return false;
  const text = bytes.toString('latin1');
  return patterns.some(([pattern]) => {
    pattern.lastIndex = 0;
    return pattern.test(text);
  });
}

/** The bytes with each secret's reformatted occurrences replaced by its label (URL-encoded, as replaceAll does). */
function replaceReformatted(data: Buffer, patterns: Array<[RegExp, string]>): Buffer {
  if (!holdsReformatted(data, patterns)) return data;
  let text = data.toString('latin1');
  for (const [pattern, label] of patterns) text = text.replace(pattern, () => label);
  return Buffer.from(text, 'latin1');
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
