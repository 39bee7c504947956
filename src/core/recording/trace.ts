import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { ServiceError } from '../errors.js';
import { scrubTrace } from './scrub.js';
import type { SessionSecrets } from './secrets.js';
import { readZip, writeZip, type ZipEntry } from './zip.js';

/** What a recording captures: `record: true` is screenshots and DOM snapshots, no video. */
export interface TraceOptions {
  screenshots: boolean;
  snapshots: boolean;
  video: boolean;
}

const VIDEO_SIZE = { width: 1280, height: 800 };

/**
 * Playwright tracing on one session's context, in chunks: each export closes the chunk so far (scrubbed of secrets
 * before it is kept on disk) and opens the next, and answers every chunk merged into one trace zip, which the trace
 * viewer opens as one timeline. Each operation is a tracing group named after its actionId.
 */
export class TraceRecorder {
  private readonly chunks: string[] = [];
  private readonly videos: string[] = [];
  private readonly screencasts = new Map<Page, string>();
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
    // Kept scrubbed: the raw chunk, with the secrets in it, is overwritten at once.
    await writeFile(path, await writeZip(await scrubTrace(await readZip(await readFile(path)), secrets)));
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
    for (const [index, path] of this.videos.entries()) {
      const data = await readFile(path).catch(() => undefined);
      if (data) byName.set(`video/${index}.webm`, { name: `video/${index}.webm`, data });
    }
    // Secrets learnt since a chunk was kept are masked in it too.
    return writeZip(await scrubTrace([...byName.values()], secrets));
  }

  private async startVideo(page: Page): Promise<void> {
    if (!this.open || page.isClosed()) return;
    const path = join(this.dir, `video-${this.videoCount++}.webm`);
    this.screencasts.set(page, path);
    page.once('close', () => void this.stopVideo(page));
    await page.screencast.start({ path, size: VIDEO_SIZE });
  }

  private async stopVideo(page: Page): Promise<void> {
    const path = this.screencasts.get(page);
    if (path === undefined) return;
    this.screencasts.delete(page);
    await page.screencast.stop().catch(() => undefined);
    this.videos.push(path);
  }

  /** A screencast's file is complete only once stopped: each export stops them and starts the next part. */
  private async restartVideos(): Promise<void> {
    for (const page of [...this.screencasts.keys()]) {
      await this.stopVideo(page);
      await this.startVideo(page).catch(() => undefined);
    }
  }
}
