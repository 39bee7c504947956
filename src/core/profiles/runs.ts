import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeProfile, encodeProfile, readProfileFile, writeAtomically } from './file.js';
import { RUN_EXTENSION, type ProfileStore } from './profiles.js';

/** Most runs one API key keeps; the least recently stored goes first. */
export const MAX_RUNS_PER_KEY = 100;
/** Most runs kept in memory (no profile store) across every key. */
export const MAX_RUNS_IN_MEMORY = 1_000;

/**
 * Runs kept per API key (docs/replay.md): a session's script saved for replay, a cached agent run. With a profile store
 * they are sealed files beside the key's profiles (the same directory and encryption), so they outlive the process;
 * without one they are kept in memory, bounded. A run is JSON its user checks; nothing here reads inside it.
 */
export class StoredRuns {
  private readonly memory = new Map<string, unknown>();

  constructor(private readonly store: ProfileStore | undefined) {}

  async put(owner: string, id: string, run: unknown): Promise<void> {
    if (!this.store) {
      const key = memoryKey(owner, id);
      this.memory.delete(key);
      this.memory.set(key, run);
      this.boundMemory(owner);
      return;
    }
    const { dir, file, fileId, key } = await this.store.runFile(owner, id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeAtomically(file, encodeProfile(key, fileId, { storedAt: new Date().toISOString() }, run));
    await boundDir(dir, MAX_RUNS_PER_KEY);
  }

  /** The run, or undefined when none is kept under this id for this owner (or its file fails its check). */
  async get(owner: string, id: string): Promise<unknown> {
    if (!this.store) {
      const key = memoryKey(owner, id);
      const run = this.memory.get(key);
      if (run === undefined) return undefined;
      // Used again: the last to be let go.
      this.memory.delete(key);
      this.memory.set(key, run);
      return run;
    }
    const { file, fileId, key } = await this.store.runFile(owner, id);
    try {
      return decodeProfile(key, fileId, await readProfileFile(file)).body;
    } catch {
      return undefined;
    }
  }

  private boundMemory(owner: string): void {
    const prefix = `${owner}\0`;
    const owned = [...this.memory.keys()].filter((key) => key.startsWith(prefix));
    for (const key of owned.slice(0, Math.max(0, owned.length - MAX_RUNS_PER_KEY))) this.memory.delete(key);
    for (const key of [...this.memory.keys()].slice(0, Math.max(0, this.memory.size - MAX_RUNS_IN_MEMORY))) this.memory.delete(key);
  }
}

function memoryKey(owner: string, id: string): string {
  return `${owner}\0${id}`;
}

/** Deletes the oldest run files of `dir` past `max`. */
async function boundDir(dir: string, max: number): Promise<void> {
  const names = (await readdir(dir)).filter((name) => name.endsWith(RUN_EXTENSION));
  if (names.length <= max) return;
  const dated = await Promise.all(
    names.map(async (name) => ({
      name,
      at: await stat(join(dir, name)).then(
        (info) => info.mtimeMs,
        () => 0,
      ),
    })),
  );
  dated.sort((a, b) => a.at - b.at);
  for (const { name } of dated.slice(0, names.length - max)) await unlink(join(dir, name)).catch(() => undefined);
}
