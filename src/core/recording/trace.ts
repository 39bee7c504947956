import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { ServiceError } from '../errors.js';
import { MASKED_FRAME_SUFFIX, FRAME_MARGIN_MS, scrubTrace } from './scrub.js';
import type { SessionSecrets } from './secrets.js';
import { readZip, writeZip, type ZipEntry } from './zip.js';

/** What a recording captures: `record: true` is screenshots and DOM snapshots, no video. */
export interface TraceOptions {
  screenshots: boolean;
  snapshots: boolean;
  video: boolean;
}

const VIDEO_SIZE = { width: 1280, height: 800 };

/** A picture of a page taken with the session's secrets masked, offered to the trace in place of the browser's frames. */
export interface MaskedFrame {
  page: Page;
  /** JPEG. */
  image: Buffer;
  /** The viewport it shows, CSS px. */
  width: number;
  height: number;
}

/** A masked frame kept on disk until the chunk it belongs to is saved. */
interface KeptFrame {
  pageId: string;
  file: string;
  path: string;
  wallTime: number;
  width: number;
  height: number;
}

/** A video part on disk, and when it ran (ms since the epoch; `endedAt` once stopped). */
interface VideoPart {
  path: string;
  startedAt: number;
  endedAt?: number;
}

/**
 * Playwright tracing on one session's context, in chunks: each export closes the chunk so far (scrubbed of secrets
 * before it is kept on disk) and opens the next, and answers every chunk merged into one trace zip, which the trace
 * viewer opens as one timeline. Each operation is a tracing group named after its actionId.
 *
 * Pictures cannot be scrubbed: once a secret has been typed (`secrets.typedAt`), the browser's own screencast frames
 * are dropped from the trace (scrub.ts) and so are the video parts that ran since, and the frames kept instead are the
 * masked screenshots the session takes (each operation's end, the agent's steps: addFrame).
 */
export class TraceRecorder {
  private readonly chunks: string[] = [];
  private readonly videos: VideoPart[] = [];
  private readonly screencasts = new Map<Page, VideoPart>();
  private frames: KeptFrame[] = [];
  private frameCount = 0;
  private videoCount = 0;
  private open = true;
  private grouped = false;

  private constructor(
    private readonly context: BrowserContext,
    private readonly dir: string,
    readonly options: TraceOptions,
  ) {}

  static async start(context: BrowserContext, options: TraceOptions, title: string): Promise<TraceRecorder> {
    const dir = await mkdtemp(join(tmpdir(), 'bsm-recording-'));
    const recorder = new TraceRecorder(context, dir, options);
    try {
      await context.tracing.start({ screenshots: options.screenshots, snapshots: options.snapshots, sources: false, title });
      if (options.video) {
        for (const page of context.pages()) await recorder.startVideo(page);
        context.on('page', (page) => void recorder.startVideo(page).catch(() => undefined));
      }
    } catch (err) {
      await recorder.discard();
      if (options.video && /ffmpeg/i.test(String(err)))
        throw new ServiceError(
          'recording_unavailable',
          "Video needs Playwright's ffmpeg on the server (npx playwright-core install ffmpeg); start the session with record: {video: false} or without video.",
        );
      throw err;
    }
    return recorder;
  }

  /** Opens the group the operation's browser calls are shown under in the trace viewer. */
  async group(name: string): Promise<void> {
    if (!this.open) return;
    await this.context.tracing.group(name);
    this.grouped = true;
  }

  async groupEnd(): Promise<void> {
    if (!this.grouped) return;
    this.grouped = false;
    await this.context.tracing.groupEnd().catch(() => undefined);
  }

  /** Whether the trace wants masked frames now: it records screenshots, and a secret has been typed (`typedAt`). */
  wantsFrames(secrets: SessionSecrets): boolean {
    return this.open && this.options.screenshots && secrets.typedAt !== undefined;
  }

  /** Keeps a masked picture as a screencast frame of its page, added to the chunk it falls in when that is saved. */
  async addFrame({ page, image, width, height }: MaskedFrame): Promise<void> {
    // Playwright names a page in its trace by its object's guid (`page@…`), the same on the client.
    const pageId = (page as unknown as { _guid?: unknown })._guid;
    if (!this.open || typeof pageId !== 'string') return;
    const wallTime = Date.now();
    const file = `screencast/${pageId}-${wallTime}-${this.frameCount}${MASKED_FRAME_SUFFIX}`;
    const path = join(this.dir, `frame-${this.frameCount++}.jpeg`);
    await writeFile(path, image);
    this.frames.push({ pageId, file, path, wallTime, width, height });
  }

  /** The trace so far as one zip, scrubbed with `secrets`; tracing goes on in a new chunk. */
  async export(secrets: SessionSecrets): Promise<Buffer> {
    if (this.open) {
      await this.saveChunk(secrets);
      await this.context.tracing.startChunk();
      await this.restartVideos();
    }
    return this.merged(secrets);
  }

  /** Stops tracing (the session is ending) and answers the whole trace. */
  async finish(secrets: SessionSecrets): Promise<Buffer> {
    if (this.open) {
      this.open = false;
      await this.saveChunk(secrets);
      for (const page of [...this.screencasts.keys()]) await this.stopVideo(page);
      await this.context.tracing.stop().catch(() => undefined);
    }
    return this.merged(secrets);
  }

  /** Removes the chunks and videos kept on disk. */
  async discard(): Promise<void> {
    this.open = false;
    await rm(this.dir, { recursive: true, force: true });
  }

  private async saveChunk(secrets: SessionSecrets): Promise<void> {
    const path = join(this.dir, `chunk-${this.chunks.length}.zip`);
    await this.context.tracing.stopChunk({ path });
    const frames = this.frames;
    this.frames = [];
    // Kept scrubbed: the raw chunk, with the secrets in it, is overwritten at once.
    const entries = await withFrames(await readZip(await readFile(path)), frames);
    await writeFile(path, await writeZip(await scrubTrace(entries, secrets)));
    for (const frame of frames) await rm(frame.path, { force: true });
    this.chunks.push(path);
  }

  private async merged(secrets: SessionSecrets): Promise<Buffer> {
    const byName = new Map<string, ZipEntry>();
    for (const [index, path] of this.chunks.entries()) {
      for (const entry of await readZip(await readFile(path))) {
        // Chunk n's trace files are trace-n.*; resources and screencast frames are shared by name.
        const name =
          index && /^trace\.(trace|network|stacks)$/.test(entry.name) ? entry.name.replace(/^trace/, `trace-${index}`) : entry.name;
        if (!byName.has(name)) byName.set(name, { name, data: entry.data });
      }
    }
    // A video part that ran once a secret was typed is left out: its pictures cannot be masked.
    const cutoff = secrets.typedAt === undefined ? Infinity : secrets.typedAt - FRAME_MARGIN_MS;
    for (const [index, { path, endedAt }] of this.videos.entries()) {
      if (endedAt === undefined || endedAt >= cutoff) continue;
      const data = await readFile(path).catch(() => undefined);
      if (data) byName.set(`video/${index}.webm`, { name: `video/${index}.webm`, data });
    }
    // Secrets learnt since a chunk was kept are masked in it too.
    return writeZip(await scrubTrace([...byName.values()], secrets));
  }

  private async startVideo(page: Page): Promise<void> {
    if (!this.open || page.isClosed()) return;
    const path = join(this.dir, `video-${this.videoCount++}.webm`);
    this.screencasts.set(page, { path, startedAt: Date.now() });
    page.once('close', () => void this.stopVideo(page));
    await page.screencast.start({ path, size: VIDEO_SIZE });
  }

  private async stopVideo(page: Page): Promise<void> {
    const part = this.screencasts.get(page);
    if (part === undefined) return;
    this.screencasts.delete(page);
    await page.screencast.stop().catch(() => undefined);
    this.videos.push({ ...part, endedAt: Date.now() });
  }

  /** A screencast's file is complete only once stopped: each export stops them and starts the next part. */
  private async restartVideos(): Promise<void> {
    for (const page of [...this.screencasts.keys()]) {
      await this.stopVideo(page);
      await this.startVideo(page).catch(() => undefined);
    }
  }
}

/**
 * The chunk's entries with the masked frames added: each image, and a screencast-frame event in the trace file, timed
 * on that file's clock (its context-options line: a wall time and the monotonic time beside it). The trace viewer
 * looks frames up by time, so they are added at the end, after every browser frame earlier than the first secret.
 */
async function withFrames(entries: ZipEntry[], frames: KeptFrame[]): Promise<ZipEntry[]> {
  const at = entries.findIndex((entry) => entry.name === 'trace.trace');
  if (!frames.length || at < 0) return entries;
  const trace = entries[at]!;
  const firstLine = trace.data.subarray(0, Math.max(0, trace.data.indexOf(0x0a))).toString('utf8');
  let clock: { wallTime?: unknown; monotonicTime?: unknown } = {};
  try {
    clock = JSON.parse(firstLine) as typeof clock;
  } catch {
    return entries;
  }
  if (typeof clock.wallTime !== 'number' || typeof clock.monotonicTime !== 'number') return entries;
  const { wallTime: wall, monotonicTime: mono } = clock as { wallTime: number; monotonicTime: number };
  const lines = frames.map(({ pageId, file, wallTime, width, height }) =>
    JSON.stringify({
      type: 'screencast-frame',
      pageId,
      file,
      width,
      height,
      timestamp: mono + (wallTime - wall),
      frameSwapWallTime: wallTime,
    }),
  );
  const data = Buffer.concat([trace.data, Buffer.from(`${trace.data.at(-1) === 0x0a ? '' : '\n'}${lines.join('\n')}\n`)]);
  const images = await Promise.all(frames.map(async ({ file, path }) => ({ name: file, data: await readFile(path) })));
  return [...entries.slice(0, at), { name: trace.name, data }, ...entries.slice(at + 1), ...images];
}
