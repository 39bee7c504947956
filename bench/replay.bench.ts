/**
 * Replay (docs/replay.md): what a kept agent run saves. A 10-action task on test/sites/replay (goto, sign in, then
 * change the display name, plan and email setting, save, add a note) is run by the agent with a cacheKey through the
 * fake model server, which picks each ref from the page text it is sent. Then, each in a fresh session:
 * - the same call: done again from the kept run, with no model call; its time against the first run's;
 * - the same call after the site renamed Save and moved it to the header (the account's layout 2): one model call
 *   heals that step;
 * - the call after that: no model call again, since the kept run learned the new button.
 * The fake model answers at once, so the first run's time holds no model latency; a second set of rounds makes each
 * reply wait MODEL_MS (a small model's turn) to show the ratio a user would see. Every run is checked by its model calls
 * and by the account the server saved; a miss throws.
 *
 * BENCH_RELAY=DIR: one round whose model is a person or an assistant answering through files in DIR (the agent kit's
 * relay, bench/agent-kit/model-server.ts): the first run's actions and the healing call are theirs.
 */
import { cpus } from 'node:os';
import { BrowserSessions } from '../src/client/index.js';
import type { AgentConfig, AgentResult } from '../src/core/agent/schema.js';
import { silentLogger } from '../src/core/logger.js';
import { refOf } from '../test/agent-fixtures.js';
import { startFakeLLM, type FakeLLM, type FakeReply, type ReceivedRequest, type Script } from '../test/fixtures/fake-llm.js';
import { startSiteServer, type SiteServer } from '../test/fixtures/site-server.js';
import { startModelServer, type ModelServer } from './agent-kit/model-server.js';
import { median, printTable } from './table.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The model latency added per call in the second set of rounds, ms. */
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 1_500);
const PASSWORD = 'correct horse battery';
/** What the task leaves in the account, on the server. */
const WANTED = { name: 'Alice Bench', plan: 'pro', updates: true, notes: ['bench note'] };

interface Bench {
  site: SiteServer;
  llm: FakeLLM;
  lib: BrowserSessions;
  config: AgentConfig;
  /** A real model answering through the relay, instead of the fake model's scripted replies. */
  relay?: ModelServer;
}

type Call = { name: string; arguments: Record<string, unknown> };

/** The model's turns of the task, one action each, then done: each picks its ref from the page text it is sent. */
function task(site: SiteServer, user: string): Array<(request: ReceivedRequest) => Call> {
  const act =
    (method: string, pattern: RegExp, args?: Record<string, unknown>) =>
    (request: ReceivedRequest): Call => ({
      name: 'act',
      arguments: { method, ref: refOf(request, pattern), ...(args ? { arguments: args } : {}) },
    });
  return [
    () => ({ name: 'goto', arguments: { url: site.url('/replay/login.html') } }),
    act('fill', /textbox: Username/, { value: user }),
    act('fill', /textbox: Password/, { value: '%password%' }),
    act('click', /button: Sign in/),
    act('fill', /textbox: Display name/, { value: WANTED.name }),
    act('selectOption', /combobox: Plan/, { values: [WANTED.plan] }),
    act('check', /checkbox: Email me updates/),
    act('click', /button: Save/),
    act('fill', /textbox: New note/, { value: WANTED.notes[0] }),
    act('click', /button: Add note/),
    () => ({ name: 'done', arguments: { success: true, message: 'Settings saved and the note added.' } }),
  ];
}

/** A reply after `latencyMs`, as a model that takes that long to answer. */
function later(reply: FakeReply, latencyMs: number): FakeReply {
  return latencyMs ? { delayMs: latencyMs, then: reply } : reply;
}

function turns(site: SiteServer, user: string, latencyMs: number): Script[] {
  return task(site, user).map((turn) => (request: ReceivedRequest) => {
    try {
      return later({ toolCalls: [turn(request)] }, latencyMs);
    } catch (err) {
      // A page that did not come out as scripted ends the run, and the checks below say so.
      return { toolCalls: [{ name: 'done', arguments: { success: false, message: String(err) } }] };
    }
  });
}

/** The healing call's answer (act by instruction): the renamed button's ref, read from the page the model is sent. */
function healReply(latencyMs: number): Script {
  return (request) => {
    const page = /<page>\\n([\s\S]*?)\\n<\/page>/.exec(JSON.stringify(request.body.messages))?.[1] ?? '';
    const line = page.split('\\n').find((text) => /button: Store settings/.test(text));
    const ref = line && /\[(\d+(?:-\d+)?)\]/.exec(line)?.[1];
    if (!ref) return { error: { status: 500, message: `replay bench: no Store settings button in the page sent:\n${page}` } };
    return later({ json: { ref, method: 'click', arguments: {}, description: 'the Store settings button' } }, latencyMs);
  };
}

/** A fresh account on the server; layout 2 is the site after its change (Save renamed and moved). */
async function resetAccount(site: SiteServer, user: string, layout: 1 | 2): Promise<void> {
  const response = await fetch(site.url(`/replay/reset?user=${encodeURIComponent(user)}&layout=${layout}`), { method: 'POST' });
  if (!response.ok) throw new Error(`replay bench: resetting ${user} answered ${response.status}`);
}

interface Measured {
  ms: number;
  calls: number;
  result: AgentResult;
}

/** One agent_execute with the round's cacheKey in a fresh session, timed, then checked on the server and the page. */
async function measure(bench: Bench, user: string, layout: 1 | 2, replies: Script[]): Promise<Measured> {
  const { site, llm, lib, config, relay } = bench;
  await resetAccount(site, user, layout);
  llm.reset();
  llm.enqueue(...replies);
  relay?.reset();
  const session = await lib.startSession();
  try {
    const started = performance.now();
    const result = await session.agent(config).execute({
      instruction: `On ${site.url('/replay/login.html')}, sign in as ${user} with %password%, set the display name to ${WANTED.name}, the plan to Pro and email updates on, save, then add the note "${WANTED.notes[0]}".`,
      variables: { password: PASSWORD },
      cacheKey: user,
      maxSteps: relay ? 30 : 15,
    });
    const ms = performance.now() - started;
    // A real model may try an action that fails and recover from it; the scripted one never does.
    const failed = relay ? undefined : result.actions.find((action) => action.error);
    if (!result.success || failed) throw new Error(`replay bench: the run failed: ${result.message} ${JSON.stringify(failed ?? '')}`);
    if (result.metadata?.url !== site.url('/replay/account')) throw new Error(`replay bench: the run ended on ${result.metadata?.url}`);
    const account = await (await fetch(site.url(`/replay/state?user=${encodeURIComponent(user)}`))).json();
    const wanted = { ...WANTED, layout };
    if (JSON.stringify(account) !== JSON.stringify(wanted))
      throw new Error(`replay bench: the account is ${JSON.stringify(account)}, not ${JSON.stringify(wanted)}`);
    return { ms, calls: (relay ?? llm).requests.length, result };
  } finally {
    await session.end();
  }
}

function check(what: string, measured: Measured, calls: number, cache: Record<string, unknown>): void {
  const got = { calls: measured.calls, ...measured.result.cache };
  const wanted = { calls, ...cache };
  for (const [key, value] of Object.entries(wanted))
    if (got[key as keyof typeof got] !== value)
      throw new Error(`replay bench: ${what}: ${key} is ${String(got[key as keyof typeof got])}, not ${String(value)}`);
}

interface Round {
  first: Measured;
  replay: Measured;
  healed: Measured;
  after: Measured;
}

/** The four runs of one round under one cacheKey (the user's name): first, replay, healed, after. */
async function round(bench: Bench, user: string, latencyMs: number): Promise<Round> {
  const first = await measure(bench, user, 1, bench.relay ? [] : turns(bench.site, user, latencyMs));
  // The model's turns: 10 actions and done, each one a model call and one of the run's actions (a real model's: its own).
  const calls = bench.relay ? first.calls : task(bench.site, user).length;
  const steps = bench.relay ? first.result.actions.filter((action) => action.type !== 'done').length : 10;
  check('first run', first, calls, { hit: false, stored: true, ...(bench.relay ? {} : { inferred: calls }) });
  const replay = await measure(bench, user, 1, []);
  check('replay', replay, 0, { hit: true, healed: 0, inferred: 0, ...(bench.relay ? {} : { replayed: steps }) });
  if (replay.result.usage?.input_tokens !== 0)
    throw new Error(`replay bench: the replay counted usage ${JSON.stringify(replay.result.usage)}`);
  const healed = await measure(bench, user, 2, [healReply(latencyMs)]);
  check('healing run', healed, 1, { hit: true, healed: 1, inferred: 0, stored: true });
  const after = await measure(bench, user, 2, []);
  check('run after healing', after, 0, { hit: true, healed: 0, inferred: 0 });
  return { first, replay, healed, after };
}

function rows(latency: string, rounds: Round[]): Array<Array<string | number>> {
  const firstMs = median(rounds.map(({ first }) => first.ms));
  const row = (label: string, key: keyof Round) => {
    const runs = rounds.map((done) => done[key]);
    const ms = median(runs.map((measured) => measured.ms));
    const cache = runs[0]!.result.cache!;
    return [
      latency,
      label,
      median(runs.map((measured) => measured.calls)),
      runs[0]!.result.actions.filter((action) => action.type !== 'done').length,
      cache.replayed,
      cache.healed,
      Math.round(ms),
      `${Math.round(Math.min(...runs.map((measured) => measured.ms)))}–${Math.round(Math.max(...runs.map((measured) => measured.ms)))}`,
      `${(ms / firstMs).toFixed(2)}x`,
    ];
  };
  return [
    row('first run (model picks every action)', 'first'),
    row('same call, fresh session (replay)', 'replay'),
    row('after Save was renamed and moved (heal)', 'healed'),
    row('the call after that (replay)', 'after'),
  ];
}

export async function run(): Promise<void> {
  const [site, llm] = await Promise.all([startSiteServer(), startFakeLLM()]);
  const lib = new BrowserSessions({ logger: silentLogger(), env: {} });
  const config: AgentConfig = {
    provider: 'openai',
    model: 'gpt-bench',
    options: { apiKey: 'bench', baseURL: llm.openaiBaseURL, maxRetries: 0 },
  };
  const relayDir = process.env.BENCH_RELAY;
  const relay = relayDir ? await startModelServer({ relay: { dir: relayDir, timeoutMs: 600_000 } }) : undefined;
  const bench: Bench = {
    site,
    llm,
    lib,
    config: relay ? { ...config, options: { ...config.options, baseURL: relay.baseURL } } : config,
    relay,
  };
  try {
    const table: Array<Array<string | number>> = [];
    if (relay) table.push(...rows('the relay (a real model)', [await round(bench, `relay-${Date.now()}`, 0)]));
    else {
      // Warm-up: Chromium's start and the pages' first loads are in no figure.
      await round(bench, 'bench-warm', 0);
      for (const latencyMs of [0, MODEL_MS]) {
        const rounds: Round[] = [];
        for (let i = 0; i < ROUNDS; i++) rounds.push(await round(bench, `bench-${latencyMs}-${i}`, latencyMs));
        table.push(...rows(latencyMs ? `${latencyMs} ms` : 'none (fake answers at once)', rounds));
      }
    }
    const cpu = cpus();
    printTable(
      `Replay: a 10-action agent run kept by cacheKey, then done again in fresh sessions; ${relay ? 'one round' : `median of ${ROUNDS} rounds`} (${cpu.length} cores, ${cpu[0]?.model.trim() ?? 'unknown CPU'})`,
      [
        'model latency per call',
        'run',
        'model calls',
        'browser actions',
        'replayed',
        'healed',
        'wall ms (median)',
        'wall ms (min–max)',
        '/ first run',
      ],
      table,
    );
  } finally {
    await lib.close();
    await Promise.all([site.close(), llm.close(), relay?.close()]);
  }
}
