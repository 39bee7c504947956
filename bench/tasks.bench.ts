/**
 * Tasks side by side: TodoMVC (React, Vue) and the MiniWoB++ tasks of the tests (the copies in test/sites/apps: nothing
 * beside the repository is needed), each done by a scripted client of this server
 * (test/fixtures/task-policies.ts over MCP stdio), of Playwright MCP (bench/playwright-policies.ts) and of
 * chrome-devtools-mcp (bench/devtools-policies.ts), each policy seeing only what its own tools answer. Per task:
 * success (read from that tool's own page read), calls, and o200k tokens of the text of every result read.
 * TASKS_TOOLS (ours,playwright,devtools) and TASKS_ONLY (task names) narrow a run; TASKS_TIMEOUT_MS bounds each task.
 */
import { mcpDoor } from '../test/fixtures/task-doors.js';
import { lastReward, MINIWOB, startEpisode, todoMvc } from '../test/fixtures/task-policies.js';
import { startSiteServer, type SiteServer } from '../test/fixtures/site-server.js';
import * as devtools from './devtools-policies.js';
import { peerDoor, startChromeDevtoolsMcp, startOurs, startPlaywrightMcp, type McpServer, type PeerDoor } from './peer-doors.js';
import * as playwright from './playwright-policies.js';
import { printTable } from './table.js';

const TASK_TIMEOUT_MS = Number(process.env.TASKS_TIMEOUT_MS ?? 90_000);
const ONLY = process.env.TASKS_ONLY?.split(',').filter(Boolean);
const TOOLS = process.env.TASKS_TOOLS?.split(',').filter(Boolean);

interface Outcome {
  /** undefined: not attempted (the tool cannot do it). */
  success: boolean | undefined;
  calls: number;
  tokens: number;
  note?: string;
}

type Usage = { calls: number; tokens: number };

interface Task {
  suite: 'TodoMVC' | 'MiniWoB++';
  name: string;
  path: string;
}

/** One server and how its client does each task. */
interface Contender {
  name: string;
  start(): Promise<McpServer>;
  /** Does a task on a started server and answers success; `usage` gets the door's live counters at once. */
  run(server: McpServer, task: Task, url: string, usage: (counted: Usage) => void): Promise<boolean>;
}

const TASKS: Task[] = [
  ...['react', 'vue'].map((app) => ({ suite: 'TodoMVC' as const, name: `todomvc-${app}`, path: `/apps/todomvc/${app}/index.html` })),
  ...Object.keys(MINIWOB).map((name) => ({ suite: 'MiniWoB++' as const, name, path: `/apps/miniwob/miniwob/${name}.html` })),
].filter((task) => !ONLY || ONLY.includes(task.name));

const sessions = new WeakMap<McpServer, string>();

const ours: Contender = {
  name: 'browser-session-mcp',
  start: async () => {
    const server = await startOurs();
    const started = await server.call('session_start', {}, TASK_TIMEOUT_MS);
    sessions.set(server, (started.structuredContent as { id: string }).id);
    return server;
  },
  run: async (server, task, url, usage) => {
    const door = mcpDoor((name, args) => server.call(name, args, TASK_TIMEOUT_MS), sessions.get(server)!);
    usage(door.usage);
    if (task.suite === 'TodoMVC') {
      const text = await todoMvc(door, url);
      return (
        /checkbox: buy oat milk/.test(text) &&
        /checkbox: call mom/.test(text) &&
        !/walk dog|buy milk$/m.test(text) &&
        /2 items left/.test(text)
      );
    }
    await MINIWOB[task.name]!(door, await startEpisode(door, url));
    return (lastReward(await door.read()) ?? -1) > 0;
  },
};

/** A peer's contender from its policies module. */
function peer(
  name: string,
  start: () => Promise<McpServer>,
  policies: {
    todoMvc(door: PeerDoor, url: string): Promise<boolean>;
    episode(door: PeerDoor, task: string, url: string): Promise<number | undefined>;
  },
): Contender {
  return {
    name,
    start,
    run: async (server, task, url, usage) => {
      const door = peerDoor(server, TASK_TIMEOUT_MS);
      usage(door.usage);
      return task.suite === 'TodoMVC' ? policies.todoMvc(door, url) : ((await policies.episode(door, task.name, url)) ?? -1) > 0;
    },
  };
}

const CONTENDERS: Contender[] = [
  ours,
  peer('Playwright MCP 0.0.83', startPlaywrightMcp, {
    todoMvc: playwright.todoMvc,
    episode: async (door, task, url) => {
      await playwright.MINIWOB[task]!(door, await playwright.startEpisode(door, url));
      return playwright.lastReward((await door.call('browser_snapshot')).text);
    },
  }),
  peer('chrome-devtools-mcp 1.11.0', startChromeDevtoolsMcp, {
    todoMvc: devtools.todoMvc,
    episode: async (door, task, url) => {
      const policy = devtools.MINIWOB[task];
      if (!policy) throw new NotPossible(devtools.NOT_POSSIBLE[task] ?? 'no policy');
      await policy(door, await devtools.startEpisode(door, url));
      return devtools.lastReward(await devtools.snapshot(door));
    },
  }),
].filter((contender) => !TOOLS || TOOLS.some((tool) => contender.name.toLowerCase().includes(tool.toLowerCase())));

/** A task the tool's own tools cannot do (said in the table rather than counted as a failure of its policy). */
export class NotPossible extends Error {}

/** Runs every task on one contender, restarting its server after a task that timed out or broke it. */
async function runAll(contender: Contender, site: SiteServer): Promise<Map<string, Outcome>> {
  const outcomes = new Map<string, Outcome>();
  let server: McpServer | undefined;
  try {
    for (const task of TASKS) {
      try {
        server ??= await contender.start();
      } catch (err) {
        outcomes.set(task.name, { success: false, calls: 0, tokens: 0, note: `could not start: ${message(err)}` });
        continue;
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${TASK_TIMEOUT_MS / 1000} s`)), TASK_TIMEOUT_MS);
      });
      let usage: Usage = { calls: 0, tokens: 0 };
      try {
        const success = await Promise.race([contender.run(server, task, site.url(task.path), (counted) => (usage = counted)), timeout]);
        outcomes.set(task.name, { success, ...usage });
      } catch (err) {
        if (err instanceof NotPossible) outcomes.set(task.name, { success: undefined, calls: 0, tokens: 0, note: err.message });
        else {
          // What it read until it gave up counts: a client pays for a failed attempt too.
          outcomes.set(task.name, { success: false, ...usage, note: message(err) });
          // A call may still be running in it: the next task gets a fresh server.
          await server.close().catch(() => undefined);
          server = undefined;
        }
      } finally {
        clearTimeout(timer);
      }
      const outcome = outcomes.get(task.name)!;
      console.error(
        `[tasks] ${contender.name} ${task.name}: ${outcome.success} ${outcome.calls} calls ${outcome.tokens} tokens ${outcome.note ?? ''}`,
      );
    }
  } finally {
    await server?.close().catch(() => undefined);
  }
  return outcomes;
}

function message(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 160);
}

const cell = (outcome: Outcome | undefined) => {
  if (!outcome) return ['-', '-', '-'];
  if (outcome.success === undefined) return ['n/a', '-', '-'];
  return [outcome.success ? 'yes' : 'no', outcome.calls, outcome.tokens];
};

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const results = new Map<string, Map<string, Outcome>>();
  try {
    // One server at a time: each runs its own Chromium, and the machine's cores are shared with the page work timed.
    for (const contender of CONTENDERS) results.set(contender.name, await runAll(contender, site));
  } finally {
    await site.close();
  }
  const names = CONTENDERS.map((contender) => contender.name);
  for (const suite of ['TodoMVC', 'MiniWoB++'] as const) {
    const tasks = TASKS.filter((task) => task.suite === suite);
    if (!tasks.length) continue;
    printTable(
      `${suite}: success, calls, o200k tokens of the tool results read (per tool, its own scripted policy)`,
      ['task', ...names.flatMap((name) => [`${name} ok`, 'calls', 'tokens'])],
      tasks.map((task) => [task.name, ...names.flatMap((name) => cell(results.get(name)!.get(task.name)))]),
    );
  }
  const totals = names.map((name) => {
    const outcomes = [...results.get(name)!.values()];
    return {
      name,
      done: outcomes.filter((outcome) => outcome.success).length,
      attempted: outcomes.filter((outcome) => outcome.success !== undefined).length,
      calls: outcomes.reduce((sum, outcome) => sum + outcome.calls, 0),
      tokens: outcomes.reduce((sum, outcome) => sum + outcome.tokens, 0),
    };
  });
  const base = totals.find((total) => total.name === ours.name)?.tokens;
  printTable(
    `Summary over ${TASKS.length} tasks (calls and tokens summed over every task attempted, done or not)`,
    ['tool', 'tasks done', 'attempted', 'calls', 'tokens', 'tokens vs ours'],
    totals.map((total) => [
      total.name,
      total.done,
      total.attempted,
      total.calls,
      total.tokens,
      base ? `${(total.tokens / base).toFixed(2)}x` : '-',
    ]),
  );
  const notes = names.flatMap((name) =>
    [...results.get(name)!.entries()].filter(([, outcome]) => outcome.note).map(([task, outcome]) => `- ${name}, ${task}: ${outcome.note}`),
  );
  if (notes.length) console.log(`\nNotes:\n${notes.join('\n')}`);
}
