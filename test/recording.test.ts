import { describe, expect, it } from 'vitest';
import { BrowserSessions, type BrowserSession } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import { useLibrarySite } from './fixtures/library-site.js';
import { rejection } from './fixtures/rejection.js';
import { filesContaining, openTraceZip } from './fixtures/trace-zip.js';
import { findAction } from './fixtures/refs.js';

const SECRET = 'S3cr3t-Passw0rd! & more';
const CODE = 'otp-918273';
const COOKIE = 'cookie-7f3a9c1e-session';

const fixture = useLibrarySite();

/** A value as the browser sends it in a form post or a GET form's URL (application/x-www-form-urlencoded: `!` is %21). */
const formEncoded = (value: string) => new URLSearchParams({ v: value }).toString().slice('v='.length);

/** Signs in with a %secret% password and a %code% one-time code, then clicks through two pages; answers the actionIds in order. */
async function signInAndBrowse(session: BrowserSession): Promise<Array<{ operation: string; actionId: string }>> {
  const steps: Array<{ operation: string; actionId: string }> = [];
  const track = (operation: string) => ({ onOutcome: ({ actionId }: { actionId: string }) => steps.push({ operation, actionId }) });
  await session.navigate(fixture.site.url('/recording/login.html'), {}, track('navigate'));
  const { actions } = await session.page.observe({}, track('observe'));
  const variables = { secret: SECRET, code: CODE };
  await session.page.act({ action: { ...findAction(actions, /textbox: Username/), arguments: { value: 'alice' } } }, track('act'));
  await session.page.act(
    { action: { ...findAction(actions, /textbox: One-time code/), arguments: { value: '%code%' } }, variables },
    track('act'),
  );
  await session.page.act(
    { action: { ...findAction(actions, /textbox: Password/), arguments: { value: '%secret%' } }, variables },
    track('act'),
  );
  const signedIn = await session.page.act(findAction(actions, /button: Sign in/), track('act'));
  expect(signedIn.url).toBe(fixture.site.url('/recording/login'));
  const statements = findAction((await session.page.observe({}, track('observe'))).actions, /link: Statements/);
  expect((await session.page.act(statements, track('act'))).url).toBe(fixture.site.url('/recording/statements.html'));
  const settings = findAction((await session.page.observe({}, track('observe'))).actions, /link: Settings/);
  expect((await session.page.act(settings, track('act'))).title).toBe('Settings');
  return steps;
}

// Each test drives a whole sign-in in Chromium; a loaded machine needs more than the default minute.
describe('recording', { timeout: 150_000 }, () => {
  it('records a sign-in with a %secret% and two pages: a valid trace zip, the steps in order by actionId, no secret in any file', async () => {
    const session = await fixture.lib.startSession({ record: true });
    try {
      const steps = await signInAndBrowse(session);
      const trace = openTraceZip(await session.trace());
      expect(trace.names).toEqual(expect.arrayContaining(['trace.trace', 'trace.network']));
      expect(trace.names.some((name) => name.startsWith('resources/'))).toBe(true);
      // Every operation is one group named "<operation> <actionId>", in the order they ran.
      expect(trace.groups.map((group) => group.title)).toEqual(steps.map(({ operation, actionId }) => `${operation} ${actionId}`));
      // The browser calls sit inside their operation's group: the fills in the act groups, the navigation in navigate's.
      const groupOf = new Map(trace.groups.map((group) => [group.callId, group.title]));
      const fills = trace.calls.filter((call) => call.method === 'Frame.fill');
      expect(fills).toHaveLength(3);
      expect(fills.map((call) => groupOf.get(call.parentId ?? ''))).toEqual(
        steps
          .filter((s) => s.operation === 'act')
          .slice(0, 3)
          .map((s) => `act ${s.actionId}`),
      );
      expect(fills.map((call) => call.params.value)).toEqual(['alice', '%code%', '%secret%']);
      const gotos = trace.calls.filter((call) => call.method === 'Frame.goto');
      expect(groupOf.get(gotos[0]?.parentId ?? '')).toBe(`navigate ${steps[0]!.actionId}`);
      // The form post reached the server and is in the network log, without the secrets in any form.
      expect(filesContaining(trace.files, 'recording/login').length).toBeGreaterThan(0);
      for (const secret of [SECRET, encodeURIComponent(SECRET), formEncoded(SECRET), CODE, COOKIE])
        expect({ secret, files: filesContaining(trace.files, secret) }).toEqual({ secret, files: [] });
      // The page still holds the values: the trace masked them, the page kept them.
      expect(filesContaining(trace.files, '%secret%').length).toBeGreaterThan(0);
    } finally {
      await session.end();
    }
  });

  it('keeps an action log of every operation: actionId, masked arguments, times, outcome and URL', async () => {
    const session = await fixture.lib.startSession({ record: { screenshots: false, snapshots: true } });
    try {
      const steps = await signInAndBrowse(session);
      const failed = await rejection(session.page.act({ action: { ref: '99-99', method: 'click' } }));
      expect(failed.code).toBe('ref_not_found');
      const { entries, dropped } = session.log();
      expect(dropped).toBe(0);
      expect(entries.map(({ operation, actionId }) => ({ operation, actionId }))).toEqual(
        steps.concat(entries.slice(-1).map(({ operation, actionId }) => ({ operation, actionId }))),
      );
      expect(entries.at(-1)).toMatchObject({ operation: 'act', outcome: 'error', errorCode: 'ref_not_found' });
      expect(entries.slice(0, -1).every((entry) => entry.outcome === 'ok' && entry.errorCode === undefined)).toBe(true);
      expect(entries[0]).toMatchObject({
        operation: 'navigate',
        arguments: { url: fixture.site.url('/recording/login.html') },
        url: fixture.site.url('/recording/login.html'),
      });
      expect(entries[4]!.arguments).toMatchObject({
        action: { arguments: { value: '%secret%' } },
        variables: { secret: '%secret%', code: '%code%' },
      });
      expect(Date.parse(entries[0]!.endedAt)).toBeGreaterThanOrEqual(Date.parse(entries[0]!.startedAt));
      expect(entries.at(-2)!.url).toBe(fixture.site.url('/recording/settings.html'));
      expect(JSON.stringify(entries)).not.toContain(SECRET);
      expect(JSON.stringify(entries)).not.toContain(CODE);
      const trace = openTraceZip(await session.trace());
      expect(trace.names.some((name) => name.startsWith('screencast/'))).toBe(false);
      expect(filesContaining(trace.files, SECRET)).toEqual([]);
    } finally {
      await session.end();
    }
  });

  it('masks a password typed without a variable, in the log and the trace', async () => {
    const session = await fixture.lib.startSession({ record: true });
    try {
      await session.navigate(fixture.site.url('/recording/login.html'));
      const { actions } = await session.page.observe();
      await session.page.act({ ...findAction(actions, /textbox: Password/), arguments: { value: 'literal-pw-5521' } });
      await session.page.act(findAction(actions, /button: Sign in/));
      expect(JSON.stringify(session.log().entries)).not.toContain('literal-pw-5521');
      const trace = openTraceZip(await session.trace());
      expect(filesContaining(trace.files, 'literal-pw-5521')).toEqual([]);
      expect(trace.calls.filter((call) => call.method === 'Frame.fill').map((call) => call.params.value)).toEqual(['[password]']);
    } finally {
      await session.end();
    }
  });

  it('masks a secret that a GET form puts in the URL, as the browser encodes it, in the network log and every other file', async () => {
    const session = await fixture.lib.startSession({ record: true });
    try {
      await session.navigate(fixture.site.url('/recording/get-login.html'));
      const { actions } = await session.page.observe();
      await session.page.act({
        action: { ...findAction(actions, /Password/), arguments: { value: '%secret%' } },
        variables: { secret: SECRET },
      });
      await session.page.act(findAction(actions, /button: Sign in/));
      // The page the form led to has the secret in its URL: the log shows it masked, as the trace must.
      expect(session.log().entries.at(-1)?.url).toContain('password=%25secret%25');
      const trace = openTraceZip(await session.trace());
      expect(filesContaining(trace.files, 'get-login').length).toBeGreaterThan(0);
      for (const secret of [SECRET, encodeURIComponent(SECRET), formEncoded(SECRET)])
        expect({ secret, files: filesContaining(trace.files, secret) }).toEqual({ secret, files: [] });
      expect(filesContaining(trace.files, 'password=%25secret%25').length).toBeGreaterThan(0);
    } finally {
      await session.end();
    }
  });

  it('masks a secret in the URL of a page event: a GET form opening a new window', async () => {
    const session = await fixture.lib.startSession({});
    try {
      await session.navigate(fixture.site.url('/recording/get-login-new-tab.html'));
      const { actions } = await session.page.observe();
      const events: unknown[] = [];
      const track = { onOutcome: (info: { pageEvents?: unknown[] }) => events.push(...(info.pageEvents ?? [])) };
      await session.page.act(
        { action: { ...findAction(actions, /Password/), arguments: { value: '%secret%' } }, variables: { secret: SECRET } },
        track,
      );
      await session.page.act(findAction(actions, /button: Sign in/), track);
      await expect
        .poll(() => session.info().recentEvents.filter((event) => event.type === 'popup').length, { timeout: 15_000 })
        .toBeGreaterThan(0);
      const popup = session.info().recentEvents.find((event) => event.type === 'popup')!;
      expect(popup.url).toContain('password=%25secret%25');
      const seen = JSON.stringify([events, session.info().recentEvents, session.log().entries]);
      for (const secret of [SECRET, encodeURIComponent(SECRET), formEncoded(SECRET)]) expect(seen).not.toContain(secret);
    } finally {
      await session.end();
    }
  });

  it('answers every chunk so far on each call: a second recording holds the steps of the first and the later ones', async () => {
    const session = await fixture.lib.startSession({ record: { screenshots: false, snapshots: false } });
    try {
      const first: string[] = [];
      await session.navigate(fixture.site.url('/recording/statements.html'), {}, { onOutcome: ({ actionId }) => first.push(actionId) });
      expect(openTraceZip(await session.trace()).groups.map((group) => group.title)).toEqual([`navigate ${first[0]}`]);
      await session.navigate(fixture.site.url('/recording/settings.html'), {}, { onOutcome: ({ actionId }) => first.push(actionId) });
      const trace = openTraceZip(await session.trace());
      expect(trace.groups.map((group) => group.title)).toEqual(first.map((id) => `navigate ${id}`));
      expect(trace.names).toEqual(expect.arrayContaining(['trace.trace', 'trace-1.trace']));
    } finally {
      await session.end();
    }
  });

  it('a session without record answers recording_not_enabled, and still keeps its action log, without credentials', async () => {
    const session = await fixture.lib.startSession();
    try {
      await session.navigate(fixture.site.url('/recording/statements.html'));
      const apiKey = 'sk-test-never-logged-4471';
      const failed = await rejection(
        session.page.act({
          instruction: 'open settings',
          modelName: 'openai/gpt-4.1-mini',
          modelClientOptions: { apiKey, baseURL: 'http://127.0.0.1:9/v1' },
        }),
      );
      expect(failed.code).toBe('model_error');
      const [, modelCall] = session.log().entries;
      expect(modelCall).toMatchObject({
        operation: 'act',
        outcome: 'error',
        errorCode: 'model_error',
        arguments: { modelClientOptions: { apiKey: '[redacted]' } },
      });
      expect(JSON.stringify(session.log())).not.toContain(apiKey);
      const error = await rejection(session.trace());
      expect(error.code).toBe('recording_not_enabled');
      expect(error.status).toBe(409);
      expect(session.log().entries.map((entry) => entry.operation)).toEqual(['navigate', 'act']);
    } finally {
      await session.end();
    }
  });

  it('an ended session keeps its recording and log for --recording-retention, then answers session_not_found', async () => {
    const kept = new BrowserSessions({ logger: silentLogger(), env: {}, recordingRetentionMs: 10_000 });
    try {
      const session = await kept.startSession({ record: { screenshots: false } });
      const ids: string[] = [];
      await session.navigate(fixture.site.url('/recording/statements.html'), {}, { onOutcome: ({ actionId }) => ids.push(actionId) });
      await session.end();
      expect(openTraceZip(await session.trace()).groups.map((group) => group.title)).toEqual([`navigate ${ids[0]}`]);
      expect(session.log().entries.map((entry) => entry.actionId)).toEqual(ids);
      await expect
        .poll(async () => (await rejection(session.trace()).catch(() => undefined))?.code, { timeout: 20_000 })
        .toBe('session_not_found');
      expect(() => session.log()).toThrow(/No session with id/);
    } finally {
      await kept.close();
    }
  });

  it("with the default retention an ended session's recording and log are gone at once", async () => {
    const session = await fixture.lib.startSession({ record: true });
    await session.end();
    expect((await rejection(session.trace())).code).toBe('session_not_found');
    expect(() => session.log()).toThrow(/No session with id/);
  });

  it('video is recorded as WebM when the server has ffmpeg, and refused with recording_unavailable (no session left) when not', async () => {
    const before = fixture.lib.list().length;
    const started = await fixture.lib
      .startSession({ record: { video: true, screenshots: false, snapshots: false } })
      .catch((err: unknown) => err);
    if (started instanceof Error) {
      expect(started).toMatchObject({ code: 'recording_unavailable' });
      expect(fixture.lib.list()).toHaveLength(before);
      return;
    }
    const session = started as BrowserSession;
    try {
      await session.navigate(fixture.site.url('/recording/statements.html'));
      const trace = openTraceZip(await session.trace());
      const video = trace.names.find((name) => name.startsWith('video/') && name.endsWith('.webm'));
      // WebM is Matroska: the EBML magic number first.
      expect(trace.files.get(video!)!.subarray(0, 4).toString('hex')).toBe('1a45dfa3');
    } finally {
      await session.end();
    }
  });

  it('refuses a bad record option with invalid_argument', async () => {
    expect((await rejection(fixture.lib.startSession({ record: { video: 'yes' } as never }))).code).toBe('invalid_argument');
    expect((await rejection(fixture.lib.startSession({ record: { audio: true } as never }))).code).toBe('invalid_argument');
  });
});
