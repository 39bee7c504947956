import { agentAsks } from '../core/live/index.js';

export interface AppPageOptions {
  /** The base of live-view links: the app shows a link only under `${base}/live/`. */
  base: string;
  version: string;
  /** The ext-apps browser build: one ES module whose last statement exports `App` and `PostMessageTransport`. */
  bridge: string;
}

/**
 * The MCP App's HTML: one inline module (the ext-apps build, then the view below) and an <iframe> of the live-view
 * page. The host hands it the tool result (ui/notifications/tool-result): live_view's `{url, expiresAt, interactive}`,
 * or agent_execute's `metadata.humanHelp` when the agent stopped for a person; any other result leaves it empty (no
 * height). Everything else, takeover and Done included, is the live-view page's own.
 */
export function liveViewAppPage({ base, version, bridge }: AppPageOptions): string {
  const [asksBefore, asksAfter] = agentAsks('\u0000').split('\u0000');
  const constants = { base, version, asksBefore, asksAfter };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Live view</title>
<style>
  html, body { margin: 0; background: #1e1e1e; color: #eee; font: 14px system-ui, sans-serif; }
  body[data-state="empty"] { display: none; }
  header { display: flex; gap: 8px; align-items: center; padding: 6px 10px; background: #2b2b2b; }
  #message { flex: 1; }
  button { font: inherit; padding: 4px 14px; border-radius: 4px; border: 0; cursor: pointer; background: #555; color: #fff; }
  #error { padding: 6px 10px; background: #8b1d1d; color: #fff; }
  #view { display: block; width: 100%; aspect-ratio: 1280 / 870; min-height: 240px; border: 0; background: #1e1e1e; }
</style>
</head>
<body data-state="connecting">
<header><span id="message">Waiting for the live view link…</span><button id="open" type="button" hidden>Open in a new window</button></header>
<div id="error" role="alert" hidden></div>
<iframe id="view" title="Live view of the browser session" allow="clipboard-write" referrerpolicy="no-referrer" hidden></iframe>
<script type="module">
${withView(bridge, view(constants))}
</script>
</body>
</html>
`;
}

/** The view, a function of the ext-apps exports: it connects to the host and shows the live view of the tool result. */
function view(constants: Record<string, string | undefined>): string {
  return `(({ App, PostMessageTransport }) => {
  const { base, version, asksBefore, asksAfter } = ${JSON.stringify(constants)};
  const $ = (id) => document.getElementById(id);
  const frame = $('view'), open = $('open'), message = $('message'), error = $('error');
  const app = new App({ name: 'browser-session-mcp live view', version }, {});
  let shown = '';
  const fail = (text) => {
    document.body.dataset.state = 'error';
    error.textContent = text;
    error.hidden = false;
  };
  /** What the result asks to show: a live-view link of this server, with the words above it; null: nothing. */
  const liveViewOf = (result) => {
    const data = result.structuredContent || {};
    if (typeof data.url === 'string' && typeof data.interactive === 'boolean') {
      const until = data.expiresAt ? ' The link expires at ' + new Date(data.expiresAt).toLocaleTimeString() + '.' : '';
      return { url: data.url, text: (data.interactive ? 'Click the page or Take control to act on it; press Done to hand it back.' : 'Watch only.') + until };
    }
    const help = data.metadata && data.metadata.humanHelp;
    if (help && typeof help.url === 'string')
      return { url: help.url, text: asksBefore + String(help.reason || '') + asksAfter + ' Act on the page, press Done, then ask for the agent to go on.' };
    return null;
  };
  app.ontoolresult = (result) => {
    error.hidden = true;
    if (result.isError) {
      const text = (result.content || []).filter((block) => block.type === 'text').map((block) => block.text).join(' ');
      return fail(text || 'The tool call failed.');
    }
    const live = liveViewOf(result);
    if (!live) {
      document.body.dataset.state = 'empty';
      return;
    }
    // Only this server's live-view pages: the app's CSP lets it frame nothing else.
    if (!live.url.startsWith(base + '/live/')) return fail('The result does not hold a live view link of this server.');
    message.textContent = live.text;
    if (shown !== live.url) frame.src = shown = live.url;
    frame.hidden = false;
    open.hidden = false;
    document.body.dataset.state = 'shown';
  };
  app.ontoolcancelled = () => fail('The tool call was cancelled.');
  app.onteardown = async () => {
    // Leaving closes the viewer's socket: a person who held the page without pressing Done hands it back.
    frame.src = 'about:blank';
    return {};
  };
  open.addEventListener('click', () => {
    const caps = app.getHostCapabilities();
    if (caps && caps.openLinks) app.openLink({ url: shown }).catch(() => window.open(shown, '_blank', 'noopener'));
    else window.open(shown, '_blank', 'noopener');
  });
  app.connect(new PostMessageTransport(window.parent, window.parent)).then(
    () => { if (document.body.dataset.state === 'connecting') document.body.dataset.state = 'waiting'; },
    (err) => fail('Could not connect to the host: ' + (err && err.message)),
  );
})`;
}

/**
 * The ext-apps module with its closing `export {...}` replaced by a call of the view with `App` and
 * `PostMessageTransport`: one inline module, nothing left on `window`. Fails loudly on a build of another shape.
 */
function withView(bridge: string, viewFunction: string): string {
  const start = bridge.lastIndexOf('export{');
  const clause = start < 0 ? null : /^export\{([^}]*)\};?\s*$/.exec(bridge.slice(start));
  if (!clause) throw new Error('The ext-apps browser build does not end with export{...}: the live view app cannot use it.');
  const locals = new Map(
    clause[1]!.split(',').map((entry) => {
      const [local, exported] = entry.trim().split(/\s+as\s+/);
      return [exported ?? local!, local!] as const;
    }),
  );
  const app = locals.get('App');
  const transport = locals.get('PostMessageTransport');
  if (!app || !transport) throw new Error('The ext-apps browser build exports no App or PostMessageTransport.');
  const code = `${bridge.slice(0, start)};(${viewFunction})({ App: ${app}, PostMessageTransport: ${transport} });`;
  // Inline script text: "</script" would end it early, "<!--" would change how it is read.
  if (code.includes('<!--')) throw new Error('The ext-apps browser build holds "<!--", which an inline script cannot.');
  return code.replace(/<\/(script)/gi, '<\\/$1');
}
