import type { SessionSecrets } from './secrets.js';
import type { ZipEntry } from './zip.js';

/** Headers whose values are credentials: shown as `[redacted]` in the trace's network log. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-svc-api-key', 'x-api-key']);
const REDACTED = '[redacted]';
/** Entries that are JSON lines: the action log, the network log, the stacks. */
const JSON_LINES = /\.(trace|network|stacks)$/;
/** Entries kept byte for byte: images and video hold no text to search (their pixels are out of scope). */
const BINARY = /\.(jpe?g|png|webp|gif|webm|woff2?|ttf|ico)$/i;

/**
 * A trace with nothing secret in it. Password inputs' values are blanked in every DOM snapshot (and added to
 * `secrets`, so the fill that typed them and the form that posted them are masked too); then every secret is masked
 * in every string of the JSON entries (action parameters, logs, snapshots, inline request bodies) and in the bytes of
 * the other text entries (request and response bodies) as typed, URL-encoded and HTML-escaped; credential headers
 * and cookies are redacted from the network log.
 */
export function scrubTrace(entries: readonly ZipEntry[], secrets: SessionSecrets): ZipEntry[] {
  const parsed = new Map<string, unknown[]>();
  for (const entry of entries) {
    const events = JSON_LINES.test(entry.name) ? parseLines(entry.data) : undefined;
    if (events) parsed.set(entry.name, events);
  }
  for (const events of parsed.values()) for (const event of events) blankPasswords(event, secrets);
  const forms = secrets.encodedForms();
  return entries.map(({ name, data }) => {
    const events = parsed.get(name);
    if (events) {
      const lines = events.map((event) => JSON.stringify(secrets.maskDeep(redactCredentials(event))));
      return { name, data: Buffer.from(lines.join('\n') + (lines.length ? '\n' : '')) };
    }
    if (BINARY.test(name) || !forms.length) return { name, data };
    return { name, data: replaceAll(data, forms) };
  });
}

/** One JSON value per line (trace.stacks is one line); undefined when a line is not JSON, so its bytes are masked instead. */
function parseLines(data: Buffer): unknown[] | undefined {
  try {
    return data
      .toString('utf8')
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as unknown);
  } catch {
    return undefined;
  }
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
