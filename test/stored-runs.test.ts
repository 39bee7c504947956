import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { MAX_RUNS_PER_KEY, ProfileStore, StoredRuns } from '../src/core/profiles/index.js';
import { MAX_RUN_STEPS, RunSteps } from '../src/core/recording/index.js';

const dir = mkdtempSync(join(tmpdir(), 'bsm-runs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A run as replay keeps it: a step whose selector and URL would tell a reader of the disk what the run does. */
const RUN = {
  steps: [
    { method: 'goto', url: 'https://bank.example/login' },
    { method: 'fill', target: { selector: 'internal:role=textbox[name="Password"i]' }, arguments: { value: '%password%' } },
  ],
};

/** Kept runs (docs/replay.md): beside the profiles and sealed like them, or in memory; per key either way, and bounded. */
describe('stored runs', () => {
  it('with a profile store, a run is a sealed file in the key runs folder: nothing of it readable on disk, another key finds nothing', async () => {
    const profiles = new ProfileStore({
      dir,
      secret: 'a secret of 32 characters or more!!',
      keyFile: join(dir, 'k'),
      logger: silentLogger(),
    });
    const runs = new StoredRuns(profiles);
    await runs.put('key-a', 'run_1', RUN);

    expect(await runs.get('key-a', 'run_1')).toEqual(RUN);
    expect(await runs.get('key-b', 'run_1')).toBeUndefined();
    const { dir: folder, file } = await profiles.runFile('key-a', 'run_1');
    expect(readdirSync(folder)).toEqual([file.slice(folder.length + 1)]);
    const bytes = readFileSync(file);
    for (const plain of ['bank.example', 'Password', 'run_1', 'key-a', '%password%']) expect(bytes.includes(plain)).toBe(false);
    // A run read back under another secret fails its check and is as good as absent.
    const other = new StoredRuns(
      new ProfileStore({ dir, secret: 'another secret, also long enough!!', keyFile: join(dir, 'k2'), logger: silentLogger() }),
    );
    expect(await other.get('key-a', 'run_1')).toBeUndefined();
  });

  it(`keeps at most ${MAX_RUNS_PER_KEY} runs per key in memory, the least recently used let go first, per key`, async () => {
    const runs = new StoredRuns(undefined);
    for (let i = 0; i <= MAX_RUNS_PER_KEY; i++) await runs.put('key-a', `run_${i}`, { steps: [], n: i });
    await runs.put('key-b', 'run_0', { steps: [], n: 'b' });
    expect(await runs.get('key-a', 'run_0')).toBeUndefined();
    expect(await runs.get('key-a', 'run_1')).toEqual({ steps: [], n: 1 });
    expect(await runs.get('key-a', `run_${MAX_RUNS_PER_KEY}`)).toEqual({ steps: [], n: MAX_RUNS_PER_KEY });
    expect(await runs.get('key-b', 'run_0')).toEqual({ steps: [], n: 'b' });
  });
});

describe("a session's run", () => {
  it('keeps the last 1,000 steps and 4 MiB of them; a run that lost steps to the bounds is not handed out whole', () => {
    const steps = new RunSteps();
    const mark = steps.mark();
    for (let i = 0; i < MAX_RUN_STEPS + 5; i++) steps.add({ method: 'press', arguments: { key: 'Enter' } });
    expect(steps.list()).toHaveLength(MAX_RUN_STEPS);
    expect(steps.dropped).toBe(5);
    expect(steps.since(mark)).toBeUndefined();
    expect(steps.since(steps.mark() - 2)).toHaveLength(2);

    const big = new RunSteps();
    for (let i = 0; i < 60; i++) big.add({ method: 'fill', arguments: { value: 'x'.repeat(100_000) } });
    expect(big.list().length).toBeLessThan(60);
    expect(JSON.stringify(big.list()).length).toBeLessThanOrEqual(4 * 1024 * 1024);
  });
});
