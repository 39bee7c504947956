import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { mcpDoor, restDoor, type TaskDoor } from './fixtures/task-doors.js';
import { lastReward, MINIWOB, startEpisode, todoMvc } from './fixtures/task-policies.js';

/**
 * Real apps (test/sites/apps: TodoMVC, MiniWoB++), done by a scripted client that sees only what the tools
 * answer: refs from the page text, selectors from visible words, points from a screenshot. Over MCP stdio and REST.
 */
describe('tasks done from what the tools show', () => {
  const fixture = useSiteHttp();
  let stdio: StdioServer;

  beforeAll(async () => {
    stdio = await startStdioServer();
  });
  afterAll(async () => {
    await stdio?.close();
  });

  const doors: Record<string, () => Promise<TaskDoor>> = {
    'MCP stdio': async () => {
      const started = await stdio.call('session_start', {});
      return mcpDoor((name, args) => stdio.call(name, args), (started.structuredContent as { id: string }).id);
    },
    REST: async () => {
      const res = await fetch(`${fixture.server.url}/v1/sessions/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      return restDoor(fixture.server.url, ((await res.json()) as { data: { id: string } }).data.id);
    },
  };

  describe.each(Object.keys(doors))('over %s', (door) => {
    it.each(['react', 'vue'])(
      'TodoMVC (%s): add, complete, rename by double-click on the label, filter, clear completed',
      async (app) => {
        const client = await doors[door]!();
        const text = await todoMvc(client, fixture.site.url(`/apps/todomvc/${app}/index.html`));
        expect(text).toMatch(/checkbox: buy oat milk/);
        expect(text).toMatch(/checkbox: call mom/);
        expect(text).not.toMatch(/walk dog|buy milk$/m);
        expect(text).toMatch(/2 items left/);
      },
      60_000,
    );
  });

  // Over the MCP door alone, the one a model drives: REST reaches the same core, and TodoMVC drives it above.
  it('MiniWoB++ over MCP stdio: a tab, a collapsible, a dialog, a nested menu, a scroll list, a drag, a canvas click, an inbox and more, each rewarded', async () => {
    const client = await doors['MCP stdio']!();
    const rewards: Record<string, { reward?: number; said: string[] }> = {};
    for (const [task, policy] of Object.entries(MINIWOB)) {
      // What each act answered (its first line), for the failure's message: a wrong target, an error, or the time.
      const said: string[] = [];
      const started = Date.now();
      const saying: TaskDoor = {
        ...client,
        act: async (action) => (said.push((await client.act(action)).split('\n')[0]!), said.at(-1)!),
      };
      const text = await startEpisode(saying, fixture.site.url(`/apps/miniwob/miniwob/${task}.html`));
      await policy(saying, text);
      const after = await client.read();
      said.push(`${Date.now() - started} ms; ${/Last reward:[^\n]*(?:\n[^\n]*)?/.exec(after)?.[0] ?? 'no reward shown'}`);
      rewards[task] = { reward: lastReward(after), said };
    }
    expect(Object.keys(rewards).length).toBeGreaterThanOrEqual(10);
    for (const [task, { reward, said }] of Object.entries(rewards))
      expect({ task, reward: (reward ?? -1) > 0 }, said.join(' | ')).toEqual({ task, reward: true });
  }, 180_000);
});
