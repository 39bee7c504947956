import { execFileSync } from 'node:child_process';
import { createHmac, hkdfSync, scryptSync } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, readdir, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions, type BrowserSession } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import { MAX_STORAGE_STATE_BYTES, ProfileStore, type StorageState } from '../src/core/profiles/index.js';
import { encodeProfile } from '../src/core/profiles/file.js';
import { addStateCookies } from '../src/core/storage/session-state.js';
import { TEST_LAUNCH_OPTIONS } from './fixtures/browser-hosts.js';
import { NAMING_KEY_FILE } from '../src/core/profiles/secret.js';
import { capturingLogger } from './fixtures/capturing-logger.js';
import { loginActions, loginSecrets } from './fixtures/login.js';
import { rejection } from './fixtures/rejection.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';

const SECRET = 'profiles-test-secret-0123456789';

describe('storage state and profiles through the library', () => {
  let site: SiteServer;
  let dir: string;
  let lib: BrowserSessions;
  let logLines: string[];

  const signIn = async (session: BrowserSession) => {
    await session.page.goto(site.url('/auth/login.html'));
    for (const request of loginActions(await session.page.observe())) await session.page.act(request);
    expect(await statusOf(session)).toBe('Signed in as alice');
  };
  const statusOf = async (session: BrowserSession) => {
    await session.page.goto(site.url('/auth/home'));
    const text = (await session.page.extract()).pageText;
    return /Signed (in as \w+|out)/.exec(text)?.[0];
  };
  const noteOf = async (session: BrowserSession) => /Note: (\S+)/.exec((await session.page.extract()).pageText)?.[1];

  beforeAll(async () => {
    site = await startSiteServer();
    dir = await mkdtemp(join(tmpdir(), 'profiles-'));
    const captured = capturingLogger();
    logLines = captured.lines;
    lib = new BrowserSessions({
      logger: captured.logger,
      sessionIdleTimeoutMs: 120_000,
      profiles: { dir: join(dir, 'profiles'), secret: SECRET, keyFile: join(dir, 'unused.key') },
    });
  });
  afterAll(async () => {
    await lib?.close();
    await site?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a session started from a saved profile is signed in without signing in, and its file holds no cookie or note in plain text', async () => {
    const first = await lib.startSession();
    await signIn(first);
    const { cookie, note } = loginSecrets(await first.state(), site.origin);
    expect(await lib.profiles.list()).toEqual({ profiles: [] });
    const saved = await first.saveProfile('work');
    expect(saved).toMatchObject({ name: 'work', cookies: 1, origins: 1 });
    await first.end();

    const second = await lib.startSession({ profile: 'work' });
    expect(await statusOf(second)).toBe('Signed in as alice');
    expect(await noteOf(second)).toBe(note);
    await second.end();

    const listed = await lib.profiles.list();
    expect(listed.profiles).toEqual([saved]);
    const file = await lib.service.profiles.store!.fileOf('library', 'work');
    const bytes = await readFile(file);
    for (const secret of [cookie, note, 'work', 'library', 'ledger_session', 'ledger-note'])
      expect(bytes.includes(Buffer.from(secret)), `${secret} in the file`).toBe(false);
    expect(file).not.toContain('work');
    // Every log line of this flow, at trace level, is free of the cookie value and the stored note.
    expect(logLines.length).toBeGreaterThan(0);
    for (const secret of [cookie, note]) expect(logLines.join('\n')).not.toContain(secret);
  });

  it("starts from a storage state the caller passes, and answers the session state in Playwright's shape", async () => {
    const first = await lib.startSession();
    await signIn(first);
    const state = await first.state();
    expect(state.cookies[0]).toMatchObject({ name: 'ledger_session', httpOnly: true, sameSite: 'Lax', domain: '127.0.0.1', path: '/' });
    expect(state.origins).toEqual([
      { origin: site.origin, localStorage: [{ name: 'ledger-note', value: expect.stringMatching(/^note-/) }] },
    ]);
    await first.end();

    const second = await lib.startSession({ storageState: JSON.parse(JSON.stringify(state)) as StorageState });
    expect(await statusOf(second)).toBe('Signed in as alice');
    expect(await noteOf(second)).toBe(loginSecrets(state, site.origin).note);
    await second.end();
  });

  it('includes IndexedDB when asked, and a session starts from it', async () => {
    const first = await lib.startSession();
    await first.page.goto(site.url('/index.html'));
    await lib.service.sessions.get(first.id, 'library').page.evaluate(
      () =>
        new Promise<void>((resolve, reject) => {
          const open = indexedDB.open('auth', 1);
          open.onupgradeneeded = () => open.result.createObjectStore('tokens');
          open.onsuccess = () => {
            const tx = open.result.transaction('tokens', 'readwrite');
            tx.objectStore('tokens').put('id-token-42', 'firebase');
            tx.oncomplete = () => resolve();
            tx.onerror = () => reject(tx.error);
          };
        }),
    );
    expect((await first.state()).origins).toEqual([]);
    const state = await first.state({ indexedDB: true });
    expect(state.origins[0]?.indexedDB?.[0]).toMatchObject({ name: 'auth', version: 1, stores: [{ name: 'tokens' }] });
    await first.end();

    const second = await lib.startSession({ storageState: state });
    await second.page.goto(site.url('/index.html'));
    const token = await lib.service.sessions.get(second.id, 'library').page.evaluate(
      () =>
        new Promise<unknown>((resolve, reject) => {
          const open = indexedDB.open('auth', 1);
          open.onsuccess = () => {
            const get = open.result.transaction('tokens').objectStore('tokens').get('firebase');
            get.onsuccess = () => resolve(get.result);
            get.onerror = () => reject(get.error);
          };
        }),
    );
    expect(token).toBe('id-token-42');
    await second.end();
  });

  it('session end with saveProfile saves to the profile the session started from', async () => {
    const first = await lib.startSession();
    await first.page.goto(site.url('/index.html'));
    await first.saveProfile('blank');
    await first.end();
    const second = await lib.startSession({ profile: 'blank' });
    await signIn(second);
    await second.end({ saveProfile: true });
    const third = await lib.startSession({ profile: 'blank' });
    expect(await statusOf(third)).toBe('Signed in as alice');
    await third.end();
    await lib.profiles.delete('blank');
    expect((await rejection(lib.startSession({ profile: 'blank' }))).code).toBe('profile_not_found');
    expect((await rejection(lib.profiles.delete('blank'))).code).toBe('profile_not_found');
  });

  it('refuses saveProfile on end for a session not started from a profile, and keeps the session open', async () => {
    const session = await lib.startSession();
    const error = await rejection(session.end({ saveProfile: true }));
    expect(error.code).toBe('invalid_argument');
    expect(session.info().state).toBe('open');
    await session.end();
  });

  it('names the bad field of a storage state without echoing its values, and bounds its size', async () => {
    const state = {
      cookies: [
        {
          name: 'sid',
          value: 'cookie-secret-value',
          domain: '127.0.0.1',
          path: '/',
          expires: -1,
          httpOnly: true,
          secure: false,
          sameSite: 'Sometimes',
        },
      ],
      origins: [],
    };
    const bad = await rejection(lib.startSession({ storageState: state }));
    expect(bad.code).toBe('invalid_argument');
    expect(bad.message).toContain('storageState.cookies.0.sameSite');
    expect(JSON.stringify(bad.toJSON())).not.toContain('cookie-secret-value');

    const origin = await rejection(
      lib.startSession({ storageState: { cookies: [], origins: [{ origin: 'https://a.example/path', localStorage: [] }] } }),
    );
    expect(origin.message).toContain('storageState.origins.0.origin');
    expect((await rejection(lib.startSession({ storageState: { cookies: [] } }))).message).toContain('storageState.origins');
    expect((await rejection(lib.startSession({ storageState: {}, profile: 'work' }))).code).toBe('invalid_argument');
    expect((await rejection(lib.startSession({ profile: '../etc' }))).message).toContain('profile');

    const huge = {
      cookies: [],
      origins: [{ origin: site.origin, localStorage: [{ name: 'big', value: 'x'.repeat(MAX_STORAGE_STATE_BYTES) }] }],
    };
    const tooLarge = await rejection(lib.startSession({ storageState: huge }));
    expect(tooLarge.code).toBe('payload_too_large');
    // Each origin is restored by a page load of its own (60-140 ms): over MAX_ORIGINS is refused before any browser work.
    const origins = Array.from({ length: 101 }, (_, i) => ({
      origin: `https://site${i}.example`,
      localStorage: [{ name: 'k', value: 'x'.repeat(4000) }],
    }));
    const tooMany = await rejection(lib.startSession({ storageState: { cookies: [], origins } }));
    expect(tooMany).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('at most 100 origins (MAX_ORIGINS)') });
    expect(tooMany.message).toContain('storageState.origins');
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const tooDeep = await rejection(lib.startSession({ storageState: { cookies: [], origins: [], deep } }));
    expect(tooDeep).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('nested more than') });
    expect(lib.list()).toHaveLength(0);
  });

  it('refuses a tampered and a truncated profile file with clear errors, and loads nothing of them', async () => {
    const session = await lib.startSession();
    await signIn(session);
    await session.saveProfile('damaged');
    await session.end();
    const store = lib.service.profiles.store!;
    const file = await store.fileOf('library', 'damaged');
    const good = await readFile(file);

    const tampered = Buffer.from(good);
    tampered[tampered.length - 40]! ^= 0x01;
    await writeFile(file, tampered);
    const altered = await rejection(lib.startSession({ profile: 'damaged' }));
    expect(altered).toMatchObject({ code: 'profile_unreadable', details: { reason: 'tampered' } });
    expect(altered.message).toContain('"damaged"');
    expect(altered.message).toContain('integrity check');

    await writeFile(file, good);
    await truncate(file, good.length - 100);
    expect(await rejection(lib.startSession({ profile: 'damaged' }))).toMatchObject({
      code: 'profile_unreadable',
      details: { reason: 'tampered' },
    });
    await truncate(file, 10);
    expect(await rejection(lib.startSession({ profile: 'damaged' }))).toMatchObject({
      code: 'profile_unreadable',
      details: { reason: 'truncated' },
      message: expect.stringContaining('truncated'),
    });
    expect(lib.list()).toHaveLength(0);
    // A damaged file is counted in the listing, and can still be deleted by name.
    expect((await lib.profiles.list()).unreadable).toBe(1);
    await lib.profiles.delete('damaged');
    expect((await lib.profiles.list()).unreadable).toBeUndefined();
  });

  it('a state the browser still refuses is invalid_argument, not browser_unavailable: an IndexedDB it cannot restore, a cookie past our checks', async () => {
    const store = { name: 's', autoIncrement: false, keyPath: 'not a key path', records: [], indexes: [] };
    const origin = { origin: site.origin, localStorage: [], indexedDB: [{ name: 'db', version: 1, stores: [store] }] };
    const refused = await rejection(lib.startSession({ storageState: { cookies: [], origins: [origin] } }));
    expect(refused).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('The browser refused the storage state') });
    expect(lib.list()).toHaveLength(0);

    // A cookie Chromium refuses for a rule StorageCookie does not check is found and named, by index and name.
    const browser = await chromium.launch(TEST_LAUNCH_OPTIONS);
    try {
      const context = await browser.newContext();
      const cookie = {
        name: 'ok',
        value: 'v',
        domain: 'x.test',
        path: '/',
        expires: -1,
        httpOnly: false,
        secure: true,
        sameSite: 'Lax' as const,
      };
      const cookies = [cookie, cookie, { ...cookie, name: 'bad', value: 'secret-value\r' }];
      const error = await rejection(addStateCookies(context, cookies));
      expect(error).toMatchObject({ code: 'invalid_argument', details: { cookie: 2 } });
      expect(error.message).toContain('cookie 2 ("bad")');
      expect(error.message).not.toContain('secret-value');
    } finally {
      await browser.close();
    }
  });

  it('20 concurrent saves of one profile leave one complete file: the last writer wins, never a mix', async () => {
    const store = new ProfileStore({
      dir: join(dir, 'concurrent'),
      secret: SECRET,
      keyFile: join(dir, 'unused.key'),
      logger: silentLogger(),
    });
    const stateOf = (n: number): StorageState => ({
      cookies: Array.from({ length: 30 }, (_, i) => ({
        name: `c${i}`,
        value: `writer-${n}`,
        domain: 'example.com',
        path: '/',
        expires: -1,
        httpOnly: false,
        secure: false,
        sameSite: 'Lax' as const,
      })),
      origins: [{ origin: 'https://example.com', localStorage: [{ name: 'writer', value: `writer-${n}`.repeat(2000) }] }],
    });
    await Promise.all(Array.from({ length: 20 }, (_, n) => store.save('owner', 'shared', stateOf(n))));
    const folders = (await readdir(store.dir)).filter((entry) => entry !== NAMING_KEY_FILE);
    expect(folders).toHaveLength(1);
    const files = await readdir(join(store.dir, folders[0]!));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^[0-9a-f]{64}\.profile$/);
    const { state } = await store.load('owner', 'shared');
    const writer = state.cookies[0]!.value;
    expect(state.cookies.map((cookie) => cookie.value)).toEqual(Array(30).fill(writer));
    expect(state.origins[0]!.localStorage[0]!.value).toBe(writer.repeat(2000));
  });

  it('a FIFO, a symlink or a 3 GiB file in place of a profile is profile_unreadable at once, listed as unreadable and deletable', async () => {
    const store = new ProfileStore({ dir: join(dir, 'odd'), secret: SECRET, keyFile: join(dir, 'unused.key'), logger: silentLogger() });
    const state: StorageState = { cookies: [], origins: [{ origin: 'https://example.com', localStorage: [{ name: 'a', value: 'b' }] }] };
    await store.save('owner', 'kept', state);
    const fifo = await store.fileOf('owner', 'fifo');
    execFileSync('mkfifo', [fifo]);
    const big = await store.fileOf('owner', 'big');
    await writeFile(big, '');
    await truncate(big, 3 * 1024 ** 3);
    await symlink(await store.fileOf('owner', 'kept'), await store.fileOf('owner', 'link'));
    // Bounded: an open() that waits for a FIFO's writer never returns; a writer opened in finally lets it go.
    const bounded = <T>(promise: Promise<T>) =>
      Promise.race([promise, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000).unref())]);
    try {
      expect(await bounded(store.list('owner'))).toMatchObject({ profiles: [{ name: 'kept' }], unreadable: 3 });
      for (const [name, reason] of [
        ['fifo', 'not_a_profile'],
        ['link', 'not_a_profile'],
        ['big', 'too_large'],
      ] as const)
        expect(await bounded(rejection(store.load('owner', name)))).toMatchObject({ code: 'profile_unreadable', details: { reason } });
      // The other profile of the key still loads, and the odd files can be deleted by name.
      expect((await bounded(store.load('owner', 'kept'))) as unknown).toMatchObject({ state });
      for (const name of ['fifo', 'link', 'big']) await store.delete('owner', name);
      expect(await store.list('owner')).toEqual({ profiles: [expect.objectContaining({ name: 'kept' })] });
    } finally {
      const writer = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
      await writer?.close();
    }
  });

  it('without a profile directory, profiles_not_configured names the flag to give and no secret (none is needed)', async () => {
    const plain = new BrowserSessions({ logger: silentLogger() });
    try {
      const refused = await rejection(plain.profiles.list());
      expect(refused.code).toBe('profiles_not_configured');
      expect(refused.message).toContain('--profile-dir DIR');
      expect(refused.message).not.toMatch(/secret/i);
    } finally {
      await plain.close();
    }
  });

  it('generates its key file with 0600 permissions when no secret is given, and refuses one other users can read', async () => {
    const keyFile = join(dir, 'keys', 'profiles.key');
    const captured = capturingLogger();
    const options = { dir: join(dir, 'generated'), keyFile, logger: captured.logger };
    const state: StorageState = { cookies: [], origins: [{ origin: 'https://example.com', localStorage: [{ name: 'a', value: 'b' }] }] };
    await new ProfileStore(options).save('owner', 'kept', state);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    // A second store reads the same generated key: the profile written by the first opens.
    expect((await new ProfileStore(options).load('owner', 'kept')).state).toEqual(state);

    // The caller learns the store cannot be opened; the operator's log says why and what to run.
    await chmod(keyFile, 0o644);
    const refused = await rejection(new ProfileStore(options).load('owner', 'kept'));
    expect(refused).toMatchObject({ code: 'profiles_not_configured' });
    expect(refused.message).not.toContain(keyFile);
    expect(captured.lines.join('\n')).toContain(
      `The profile key file ${keyFile} can be read by other users (mode 644); run chmod 600 on it.`,
    );
  });

  it('an old-layout profile folder (names derived from the secret, no naming-key file) keeps working after the upgrade', async () => {
    // The layout before the naming-key file, written here by hand: every key derived from the secret.
    const master = scryptSync(SECRET, 'browser-session-mcp/profiles/v1', 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), purpose, 32));
    const hmac = (text: string) => createHmac('sha256', derive('profile-names')).update(text).digest('hex');
    const old = join(dir, 'old-layout');
    const fileId = hmac('profile\0library\0legacy');
    await mkdir(join(old, hmac('owner\0library')), { recursive: true, mode: 0o700 });
    const state: StorageState = {
      cookies: [],
      origins: [{ origin: 'https://example.com', localStorage: [{ name: 'kept', value: 'yes' }] }],
    };
    const info = { name: 'legacy', savedAt: new Date().toISOString(), cookies: 0, origins: 1, bytes: 1 };
    await writeFile(
      join(old, hmac('owner\0library'), `${fileId}.profile`),
      encodeProfile(derive('profile-encryption'), fileId, info, state),
    );

    const upgraded = new BrowserSessions({
      logger: silentLogger(),
      profiles: { dir: old, secret: SECRET, keyFile: join(dir, 'unused.key') },
    });
    try {
      expect(await upgraded.profiles.list()).toEqual({ profiles: [info] });
      expect((await upgraded.service.profiles.store!.load('library', 'legacy')).state).toEqual(state);
      // The naming-key file now holds the keys the secret gave, 0600: the owner scopes of API keys stay as they were.
      expect((await stat(join(old, NAMING_KEY_FILE))).mode & 0o777).toBe(0o600);
      expect((await upgraded.service.profiles.ownerSecret())!.equals(derive('api-key-owners'))).toBe(true);
    } finally {
      await upgraded.close();
    }
    // A fresh folder gets random naming keys instead.
    const fresh = new ProfileStore({ dir: join(dir, 'fresh'), secret: SECRET, keyFile: join(dir, 'unused.key'), logger: silentLogger() });
    expect((await fresh.profileKeys()).names.equals(derive('profile-names'))).toBe(false);
  });
});
