import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { UrlGlob } from '../src/core/session/url-glob.js';
import { errorCode } from './fixtures/mcp-stdio.js';
import { startOptionsSite } from './fixtures/options-site.js';
import { useSiteStdio } from './fixtures/site-stdio.js';

/** Playwright's own glob matching (its RegExp), the reference for what each glob means. */
const { iso } = createRequire(import.meta.url)('playwright-core/lib/coreBundle') as {
  iso: { urlMatches(base: string | undefined, url: string, glob: string): boolean };
};

/** The blockUrls glob that froze the server for 85 s on a URL of 36 letters (issue 32). */
const WORST = '**/' + 'a*'.repeat(14) + 'b';

describe('blockUrls globs', () => {
  it('match as Playwright globs do', () => {
    const globs = [
      '**/*.css',
      '**/img/3.png',
      '**/*',
      '*',
      '**',
      '**/',
      'https://Example.COM/*.js',
      'http://127.0.0.1:*/a/**',
      '**/{a,b}/*.png',
      '**/*.{png,jpg}',
      '{**/a,**/b}/c',
      '**/x\\*y',
      '**/a,b',
      'https://*.example.com/**',
      '**/api/**/v?',
      'http://localhost/**/x',
      '/a/**/b',
      '**/a?b=*',
      'file:///x/*',
      'https://example.com/path?x=*',
      'https://EXAMPLE.com/A?b',
      'http*://**',
      WORST,
    ];
    const urls = [
      'http://127.0.0.1:3000/style.css',
      'http://127.0.0.1:3000/img/3.png',
      'https://example.com/x.js',
      'https://example.com/a/x.js',
      'http://127.0.0.1:8080/a/b/c',
      'http://h/a/q.png',
      'http://h/b/q.png',
      'http://h/f.jpg',
      'http://h/a/c',
      'http://h/x*y',
      'http://h/xzy',
      'http://h/a,b',
      'https://www.example.com/q',
      'http://h/api/1/2/v?',
      'http://h/api/v?',
      'http://localhost/x',
      'http://localhost/a/b/x',
      'http://h/',
      '/a/b',
      '/a/x/b',
      'http://h/a?b=1',
      'file:///x/y',
      'https://example.com/path?x=1',
      'https://example.com/A?b',
      'about:blank',
      'http://h/' + 'a'.repeat(20) + 'b',
      'http://h/' + 'a'.repeat(20),
    ];
    const differences: string[] = [];
    for (const glob of globs) {
      const matcher = UrlGlob.compile(glob);
      for (const url of urls) if (matcher.matches(url) !== iso.urlMatches(undefined, url, glob)) differences.push(`${glob} ${url}`);
    }
    expect(differences).toEqual([]);
  });

  it('the worst glob against a 2,000-character URL takes steps linear in the URL', () => {
    const matcher = UrlGlob.compile(WORST);
    const url = 'http://127.0.0.1:1/' + 'a'.repeat(2_000);
    expect(matcher.matches(url)).toBe(false);
    // Counted, not timed: Playwright's RegExp backtracks through about 15^n paths here.
    expect(matcher.steps).toBeLessThanOrEqual(matcher.size * 2 * (url.length + 1));
    expect(matcher.matches(url + 'b')).toBe(true);
  });

  it('a match that would take more than its budget says so', () => {
    const matcher = UrlGlob.compile('**/' + 'a*'.repeat(500) + 'b');
    expect(matcher.matches('http://h/' + 'a'.repeat(10_000), 1_000_000)).toBeUndefined();
  });

  it('a glob with a stray brace is refused when compiled', () => {
    expect(() => UrlGlob.compile('**/{a,b')).toThrow(/unmatched '\{'/);
    expect(() => UrlGlob.compile('**/{a,{b}}')).toThrow(/nested/);
  });
});

/** In a server process of its own: without a linear matcher the server's event loop stops, and the test must not. */
describe('a blockUrls glob against long URLs, over stdio', () => {
  const fixture = useSiteStdio({ flags: ['--egress-allow', '127.0.0.1'] }, startOptionsSite);

  it('the worst glob answers at once and still blocks the URLs it matches', async () => {
    const started = await fixture.server.call('session_start', { blockUrls: [WORST] });
    expect(started.isError, JSON.stringify(started.content)).toBeFalsy();
    const sessionId = (started.structuredContent as { id: string }).id;
    // Bounded well below the fixture's 170 s: the frozen server answered nothing at all.
    const navigate = (url: string) =>
      fixture.server.client.callTool({ name: 'navigate', arguments: { sessionId, url } }, undefined, { timeout: 90_000 });
    const passed = await navigate(fixture.site.url('/' + 'a'.repeat(2_000)));
    expect(passed.isError, JSON.stringify(passed.content)).toBeFalsy();
    expect(passed.structuredContent).toMatchObject({ status: 404 });
    expect(fixture.site.count('/aaaa')).toBe(1);

    const blocked = await navigate(fixture.site.url('/' + 'a'.repeat(2_000) + 'b'));
    expect(errorCode(blocked as never)).toBeDefined();
    expect(fixture.site.count('/aaaa')).toBe(1);
    const listed = (await fixture.server.call('session_list')).structuredContent as {
      sessions: Array<{ id: string; blockedRequests?: number }>;
    };
    expect(listed.sessions.find((session) => session.id === sessionId)?.blockedRequests).toBe(1);
    await fixture.server.call('session_end', { sessionId });
  }, 200_000);
});
