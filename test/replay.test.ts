import { describe, expect, it } from 'vitest';
import { LIBRARY_OWNER } from '../src/door.js';
import { refOf, useAgentHarness } from './agent-fixtures.js';
import type { ReceivedRequest } from './fixtures/fake-llm.js';
import { rejection } from './fixtures/rejection.js';

const SECRET = 'correct horse battery';
const TASK = 'Sign in as alice with password %password%.';

/** The ref of the element whose page-text line matches `pattern` in an act-by-instruction request (`[12] button: Log in`). */
function inferredRef(request: ReceivedRequest, pattern: RegExp): string {
  const text = JSON.stringify(request.body.messages);
  const page = /<page>\\n([\s\S]*?)\\n<\/page>/.exec(text)?.[1] ?? '';
  for (const line of page.split('\\n')) if (pattern.test(line)) return /\[(\d+(?:-\d+)?)\]/.exec(line)![1]!;
  throw new Error(`no line matching ${pattern} in the page sent to the model:\n${page}`);
}

/** Agent runs kept and done again without the model (issue 42), through the real OpenAI SDK against the fake model server. */
describe('replay and cached agent runs', { timeout: 120_000 }, () => {
  const h = useAgentHarness('openai');

  it('a cached agent run repeats with 0 model calls; a renamed, moved button costs one healing call; no secret is kept', async () => {
    const execute = () => h.session.agent(h.config()).execute({ instruction: TASK, variables: { password: SECRET }, cacheKey: 'sign-in' });
    h.llm.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: h.site.url('/agent/signin.html') } }] },
      (request) => ({
        toolCalls: [
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Username/), value: 'alice' } },
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Password/), value: '%password%' } },
          { name: 'act', arguments: { method: 'click', ref: refOf(request, /button: Sign in/) } },
        ],
      }),
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Signed in as alice.' } }] },
    );
    const first = await execute();
    expect(first).toMatchObject({ success: true, cache: { hit: false, replayed: 0, healed: 0, inferred: 5, stored: true } });
    expect(h.llm.requests).toHaveLength(3);

    // Another session, the same task: the kept run is done again without a model call.
    h.llm.reset();
    await h.session.end();
    const second = await h.lib.startSession();
    const again = await second.agent(h.config()).execute({ instruction: TASK, variables: { password: SECRET }, cacheKey: 'sign-in' });
    expect(h.llm.requests).toHaveLength(0);
    expect(again).toMatchObject({
      success: true,
      completed: true,
      message: 'Signed in as alice.',
      cache: { hit: true, replayed: 4, healed: 0, inferred: 0, stored: true },
      usage: { input_tokens: 0, output_tokens: 0 },
    });
    expect(again.actions.map((action) => action.type)).toEqual(['goto', 'fill', 'fill', 'click']);
    // The account page sends a visitor who is not signed in back to the sign-in page.
    expect(again.metadata?.url).toBe(h.site.url('/agent/account.html'));
    await second.end();

    // The site's redesign renames the button and moves it: one model call finds it, and the kept run learns the new one.
    const third = await h.lib.startSession();
    await third.navigate(h.site.url('/agent/layout2.html'));
    h.llm.enqueue((request) => ({
      json: { ref: inferredRef(request, /button: Log in/), method: 'click', arguments: {}, description: 'the Log in button' },
    }));
    const healed = await third.agent(h.config()).execute({ instruction: TASK, variables: { password: SECRET }, cacheKey: 'sign-in' });
    expect(h.llm.requests).toHaveLength(1);
    expect(healed).toMatchObject({ success: true, cache: { hit: true, replayed: 3, healed: 1, inferred: 0, stored: true } });
    expect(healed.usage).toMatchObject({ input_tokens: 100, output_tokens: 20 });
    expect(healed.metadata?.url).toBe(h.site.url('/agent/account.html'));
    await third.end();

    h.llm.reset();
    const fourth = await h.lib.startSession();
    await fourth.navigate(h.site.url('/agent/layout2.html'));
    const learned = await fourth.agent(h.config()).execute({ instruction: TASK, variables: { password: SECRET }, cacheKey: 'sign-in' });
    expect(h.llm.requests).toHaveLength(0);
    expect(learned.cache).toMatchObject({ hit: true, replayed: 4, healed: 0 });

    // Neither the kept run, nor any result, nor the script holds the password.
    const { runId, script } = await fourth.script();
    const kept = await h.lib.service.runs.get(LIBRARY_OWNER, runId);
    for (const text of [JSON.stringify(kept), JSON.stringify([first, again, healed, learned]), script]) expect(text).not.toContain(SECRET);
    expect(JSON.stringify(kept)).toContain('%password%');
    await fourth.end();
  });

  it('a kept run whose step cannot be healed hands the task to the model from there, and keeps the new run', async () => {
    const execute = () => h.session.agent(h.config()).execute({ instruction: TASK, variables: { password: SECRET }, cache: true });
    await h.session.navigate(h.site.url('/agent/signin.html'));
    const observed = await h.session.page.observe();
    const ref = (pattern: RegExp) => observed.actions.find((action) => pattern.test(action.description))!.ref;
    // A first run by the model, from the sign-in page: the cache key is the task, its start URL and the variables' names.
    h.llm.enqueue(
      {
        toolCalls: [
          { name: 'act', arguments: { method: 'fill', ref: ref(/Username/), value: 'alice' } },
          { name: 'act', arguments: { method: 'fill', ref: ref(/Password/), value: '%password%' } },
          { name: 'act', arguments: { method: 'click', ref: ref(/Sign in/) } },
        ],
      },
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Signed in.' } }] },
    );
    expect((await execute()).cache).toMatchObject({ hit: false, stored: true, inferred: 4 });

    // The redesign, and a healing model that finds nothing: the model takes over at the click.
    h.llm.reset();
    await h.session.navigate(h.site.url('/agent/layout2.html'));
    await h.session.navigate(h.site.url('/agent/signin.html'));
    h.llm.enqueue(
      { json: { ref: '', method: 'none', arguments: {}, description: 'nothing fits' } },
      (request) => {
        expect(JSON.stringify(request.body.messages)).toContain('could not be repeated');
        return { toolCalls: [{ name: 'act', arguments: { method: 'click', ref: refOf(request, /button: Log in/) } }] };
      },
      { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Signed in after the redesign.' } }] },
    );
    const fallen = await execute();
    expect(h.llm.requests).toHaveLength(3);
    expect(fallen).toMatchObject({
      success: true,
      message: 'Signed in after the redesign.',
      cache: { hit: true, replayed: 2, healed: 0, inferred: 2, stored: true },
    });
    expect(fallen.actions.map((action) => action.type)).toEqual(['fill', 'fill', 'click', 'done']);
    expect(fallen.metadata?.url).toBe(h.site.url('/agent/account.html'));

    // The kept run is now the one that worked on the redesign: no model call next time.
    h.llm.reset();
    await h.session.navigate(h.site.url('/agent/signin.html'));
    expect((await execute()).cache).toMatchObject({ hit: true, replayed: 3, healed: 0, inferred: 0 });
    expect(h.llm.requests).toHaveLength(0);
  });

  it("an unnamed button is kept by its row's words, not its place: a replay on a reordered list deletes the same contact, not a namesake", async () => {
    await h.session.navigate(h.site.url('/agent/rows.html'));
    const observed = await h.session.page.observe();
    const ann = observed.actions.find((action) => action.method === 'click' && /Ann Archer/.test(action.description));
    expect(ann, JSON.stringify(observed.actions)).toBeDefined();
    await h.session.page.act({ action: { ref: ann!.ref, method: 'click' } });
    const { script, runId } = await h.session.script({ format: 'json' });
    const target = (JSON.parse(script) as { steps: Array<{ target?: { selector: string } }> }).steps[1]!.target!.selector;
    expect(target).toContain('Ann Archer');
    expect(target).not.toMatch(/nth/);
    // The python script filters by the row's words with a regular expression, and imports what that needs.
    const { script: python } = await h.session.script({ format: 'python' });
    expect(python).toContain('import re\n');
    expect(python).toContain('filter(has_text=re.compile(r"(^|\\s)Ann Archer(\\s|$)"))');

    const other = await h.lib.startSession();
    await other.navigate(h.site.url('/agent/layout2.html'));
    expect(await other.replay({ runId })).toMatchObject({ success: true, replayed: 2 });
    const after = JSON.stringify(await other.page.extract());
    expect(after).toContain('Deleted Ann Archer');
    expect(after).toContain('Joann Archer');
    await other.end();
  });

  it('replay without a model stops at a step whose target is gone, saying what it expected and what the page shows', async () => {
    await h.session.navigate(h.site.url('/agent/signin.html'));
    const observed = await h.session.page.observe();
    const ref = (pattern: RegExp) => observed.actions.find((action) => pattern.test(`${action.description}`))!.ref;
    await h.session.page.act({ action: { ref: ref(/Username/), method: 'fill', arguments: { value: 'alice' } } });
    await h.session.page.act({
      action: { ref: ref(/Password/), method: 'fill', arguments: { value: '%password%' } },
      variables: { password: SECRET },
    });
    await h.session.page.act({ action: { ref: ref(/Sign in/), method: 'click' } });
    const { runId, steps } = await h.session.script({ format: 'json' });
    expect(steps).toBe(4);

    const other = await h.lib.startSession();
    const missing = await rejection(other.replay({ runId }));
    expect([missing.code, missing.message]).toEqual([
      'invalid_argument',
      'The run needs the variables password: pass their values in variables (a password typed without a variable is %password%).',
    ]);
    const done = await other.replay({ runId, variables: { password: SECRET } });
    expect(done).toMatchObject({ success: true, steps: 4, replayed: 4, healed: [], url: h.site.url('/agent/account.html') });

    // The redesigned page, and no model (the library has no key): the replay stops at the click and says why.
    await other.navigate(h.site.url('/agent/layout2.html'));
    const stopped = await other.replay({ runId, variables: { password: SECRET } });
    expect(stopped).toMatchObject({
      success: false,
      replayed: 3,
      failed: { step: 4, method: 'click', code: 'selector_not_found', url: h.site.url('/agent/signin.html') },
    });
    expect(stopped.failed!.expected).toBe('click button "Sign in"');
    expect(stopped.failed!.message).toMatch(/^The step's element, button "Sign in", is not on the page .* No model to heal it: /);
    expect(stopped.failed!.pageText).toContain('button: Log in');
    expect(JSON.stringify(stopped)).not.toContain(SECRET);
    expect(h.llm.requests).toHaveLength(0);
    const unknown = await rejection(other.replay({ runId: 'run_nothing' }));
    expect(unknown.code).toBe('run_not_found');
    await other.end();
  });
});
