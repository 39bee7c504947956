import { beforeAll, describe, expect, it } from 'vitest';
import type { BrowserSession } from '../src/client/index.js';
import type { Session } from '../src/core/sessions.js';
import { metaLine, shortTime } from '../src/core/snapshot/meta.js';
import { takeSnapshot, type SnapshotOptions } from '../src/core/snapshot/index.js';
import { useModelSite } from './fixtures/model-site.js';

// Page metadata (issue 31): the page text's first line, in extract (both forms) and in the agent's page state.
const META_LINE =
  'meta: lang en · canonical https://news.example/2024/03/night-trains · author Mara Lindqvist · published 2024-03-14T09:30Z · ' +
  'JSON-LD NewsArticle "Night trains return to Europe\'s rails" by Mara Lindqvist, Kurt Bauer · ' +
  'description How sleeper trains came back, and what a night on board costs.';

const fixture = useModelSite({
  library: (llm) => ({ model: 'openai/gpt-4.1-mini', env: { OPENAI_API_KEY: 'sk-meta-test', OPENAI_BASE_URL: llm.openaiBaseURL } }),
});
let session: BrowserSession;

beforeAll(async () => {
  session = await fixture.lib.startSession();
});

const on = async <T>(work: (s: Session) => Promise<T>): Promise<T> =>
  (await fixture.lib.service.operate('library', session.id, work)).result;
const read = async (path: string, options: SnapshotOptions = {}) => {
  await session.navigate(fixture.site.url(path));
  return on((s) => takeSnapshot(s, options));
};

describe('page metadata in the page text', () => {
  it('begins the page text with one line of every kind present, and shows <time datetime> after words that lack it', async () => {
    const { text } = await read('/pages/meta.html');
    const lines = text.split('\n');
    expect(lines[0]).toBe(META_LINE);
    // Only the first line: the body follows unchanged.
    expect(lines.filter((line) => line.startsWith('meta:'))).toHaveLength(1);
    // Shown where the words lack it (a relative date, the time of day); not where they hold it, nor in a link's name.
    expect(text).toContain(
      'Updated Friday morning (2024-03-15T08:00+01:00). Bookings opened January 10, 2024 (2024-01-10T08:00Z); ' +
        'the first trains ran February 1, 2024, the second on 2024-02-08.',
    );
    expect(text).toMatch(/\[see it in the archive\]\(\d+\)\./);
  });

  it('adds no line to a page without metadata (its language alone is none)', async () => {
    const { text } = await read('/pages/form.html');
    expect(text).not.toContain('meta:');
    expect(text.split('\n')[0]).toBe('# Create your account');
  });

  it('reads past malformed JSON-LD (broken, trailing comma, null, a string, nested lists, CDATA) without failing', async () => {
    const { text } = await read('/extract/meta-malformed.html');
    // The tags' author (its line break is a space), the date from itemprop, the one valid JSON-LD item (in CDATA).
    expect(text.split('\n')[0]).toBe(
      'meta: lang de · author Jonas Weber · published 2024-05-02 · JSON-LD Article "Der Nachtzug kommt zurück" 2024-05-02T06:00+02:00',
    );
    expect(text).toContain('Der Nachtzug fährt wieder.');
  });

  it('skips a huge JSON-LD script unparsed and caps every string', async () => {
    const { text } = await read('/extract/meta-huge.html');
    const first = text.split('\n')[0]!;
    expect(first).toMatch(/^meta: lang en · author Ana Ruiz · JSON-LD BlogPosting "Small headline" · description (Lamps ){26}Lam…$/);
    expect(first).not.toContain('Huge');
    expect(first.length).toBeLessThan(260);
  });

  it('leaves the line out of a read limited by a selector', async () => {
    const { text } = await read('/pages/meta.html', { selector: '//article' });
    expect(text).not.toContain('meta:');
    expect(text.split('\n')[0]).toBe('# Night trains');
  });

  it('masks the session secrets in the line, like the rest of the page text', async () => {
    const secret = 'sk-live-meta-0042';
    await session.navigate(fixture.site.url('/pages/meta.html'));
    const { text } = await on(async (s) => {
      s.recording.secrets.addVariables({ apiKey: secret });
      // A page that puts what it was given in its metadata (an SPA updating its head).
      await s.page.evaluate((value) => document.querySelector('meta[name=author]')!.setAttribute('content', `Key ${value}`), secret);
      return takeSnapshot(s);
    });
    expect(text.split('\n')[0]).toContain('author Key %apiKey% ·');
    expect(text).not.toContain(secret);
  });
});

describe('page metadata in extract and the agent', () => {
  it('extract without instruction: the pageText begins with the line', async () => {
    await session.navigate(fixture.site.url('/pages/meta.html'));
    const { pageText } = await session.page.extract();
    expect(pageText.split('\n')[0]).toBe(META_LINE);
  });

  it('extract with a schema: the model is sent the author and date that only the metadata holds', async () => {
    await session.navigate(fixture.site.url('/pages/meta.html'));
    fixture.llm.enqueue({ json: { author: 'Mara Lindqvist', published: '2024-03-14T09:30Z' } });
    const result = await session.page.extract({
      instruction: 'Who wrote the article, and when was it published?',
      schema: { type: 'object', properties: { author: { type: 'string' }, published: { type: 'string' } }, required: ['author'] },
    });
    expect(result).toEqual({ author: 'Mara Lindqvist', published: '2024-03-14T09:30Z' });
    const sent = JSON.stringify(fixture.llm.requests[0]!.body.messages);
    expect(sent).toContain(META_LINE.replace(/"/g, '\\"'));
    // The body of the page names neither: only the line gave them to the model.
    const { pageText } = await session.page.extract();
    expect(pageText.split('\n').slice(1).join('\n')).not.toMatch(/Lindqvist|2024-03-14/);
  });

  it("the agent's page state shows the line first in its page text", async () => {
    await session.navigate(fixture.site.url('/pages/meta.html'));
    fixture.llm.enqueue({ toolCalls: [{ name: 'done', arguments: { success: true, message: 'Mara Lindqvist' } }] });
    const result = await session
      .agent({
        provider: 'openai',
        model: 'gpt-test-model',
        options: { apiKey: 'test-key', baseURL: fixture.llm.openaiBaseURL, maxRetries: 0 },
      })
      .execute({ instruction: 'Who wrote this article?', maxSteps: 2 });
    expect(result).toMatchObject({ success: true, completed: true });
    const sent = JSON.stringify(fixture.llm.requests[0]!.body.messages);
    // Its own line, the first of the page text: the body's first line follows it.
    expect(sent).toContain(`\\n${META_LINE.replace(/"/g, '\\"')}\\nmain:\\n`);
  });
});

describe('metaLine', () => {
  const page = { url: 'https://news.example/a?utm_source=x', title: 'A story | News', text: '# A story\nThe lede says it all.' };

  it('says nothing new about a canonical URL that differs in query or fragment only, or about the language alone', () => {
    expect(metaLine({ lang: 'en', canonical: 'https://news.example/a/' }, page)).toBeUndefined();
    expect(metaLine({ lang: 'en', canonical: 'https://news.example/b' }, page)).toBe('meta: lang en · canonical https://news.example/b');
  });

  it('leaves out a headline or description the title or text holds, and JSON-LD values equal to the tags', () => {
    expect(
      metaLine(
        {
          description: 'The lede says it all.',
          author: 'Ann',
          published: '2024-01-02T03:04:00Z',
          ld: { type: 'NewsArticle', headline: 'A story', author: 'ann', published: '2024-01-02T03:04:00.000Z' },
        },
        page,
      ),
    ).toBe('meta: author Ann · published 2024-01-02T03:04Z · JSON-LD NewsArticle');
    expect(metaLine({ ld: { headline: 'Another', author: 'Bo', published: '2024-01-02' } }, page)).toBe(
      'meta: author Bo · published 2024-01-02 · JSON-LD "Another"',
    );
  });

  it('shortens date-times without losing anything', () => {
    expect(shortTime('2024-03-14T09:30:00.000Z')).toBe('2024-03-14T09:30Z');
    expect(shortTime('2024-03-14T09:30:15.250+01:00')).toBe('2024-03-14T09:30:15+01:00');
    expect(shortTime('2024-03-14')).toBe('2024-03-14');
  });
});
