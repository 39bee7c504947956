/**
 * The live-view page: plain HTML and one small script, no build step. It shows the frames in one <img> that keeps the
 * page's aspect ratio, sends pointer positions as fractions of that image, and a Done button hands the page back.
 */
export function liveViewPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Live view</title>
<style nonce="${nonce}">
  html, body { margin: 0; height: 100%; background: #1e1e1e; color: #eee; font: 14px system-ui, sans-serif; }
  body { display: flex; flex-direction: column; }
  header { display: flex; gap: 8px; align-items: center; padding: 6px 10px; background: #2b2b2b; }
  #url { flex: 1; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; font-family: ui-monospace, monospace; }
  #tabs { display: flex; gap: 4px; }
  #tabs span { padding: 2px 6px; border-radius: 4px; background: #3a3a3a; max-width: 14em; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
  #tabs span.active { background: #4a6da7; }
  button { font: inherit; padding: 4px 14px; border-radius: 4px; border: 0; cursor: pointer; }
  #done { background: #2e7d32; color: #fff; }
  #takeover { background: #555; color: #fff; }
  button:disabled { opacity: .4; cursor: default; }
  #banner { padding: 6px 10px; background: #8a6d00; color: #fff; }
  #banner.person { background: #2e7d32; }
  #banner.closed { background: #8b1d1d; }
  #refused { padding: 6px 10px; background: #8b1d1d; color: #fff; }
  main { flex: 1; min-height: 0; display: flex; align-items: center; justify-content: center; padding: 8px; }
  #screen { display: block; max-width: 100%; max-height: 100%; width: auto; height: auto; background: #fff; outline: none; user-select: none; }
  #screen:focus { box-shadow: 0 0 0 2px #4a6da7; }
  body.readonly #screen { cursor: default; }
</style>
</head>
<body data-state="connecting" data-frames="0" data-copies="0" data-refused="0" data-control="none">
<header>
  <span id="url"></span>
  <nav id="tabs" aria-label="Tabs"></nav>
  <button id="takeover" type="button" disabled>Take control</button>
  <button id="done" type="button" disabled>Done</button>
</header>
<div id="banner" role="status" hidden></div>
<div id="refused" role="alert" hidden></div>
<main><img id="screen" alt="Live view of the browser session" tabindex="0" draggable="false"></main>
<script nonce="${nonce}">
(() => {
  const $ = (id) => document.getElementById(id);
  const screen = $('screen'), banner = $('banner'), done = $('done'), takeover = $('takeover');
  const socketUrl = new URL(location.href);
  socketUrl.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  socketUrl.pathname = location.pathname.replace(/\\/$/, '') + '/ws';
  const ws = new WebSocket(socketUrl);
  ws.binaryType = 'blob';
  let interactive = false, frames = 0, copies = 0, lastMove = 0, shown = '';
  const send = (message) => { if (interactive && ws.readyState === 1) ws.send(JSON.stringify(message)); };
  const setBanner = (text, kind) => {
    banner.hidden = !text;
    banner.textContent = text || '';
    banner.className = kind || '';
  };
  const status = (s) => {
    $('url').textContent = s.url;
    $('tabs').replaceChildren(...s.tabs.map((tab) => {
      const el = document.createElement('span');
      el.textContent = tab.url || 'about:blank';
      el.title = tab.url;
      if (tab.active) el.className = 'active';
      return el;
    }));
    screen.style.aspectRatio = s.width + ' / ' + s.height;
    document.body.dataset.control = s.control;
    document.body.dataset.acting = String(s.acting);
    done.disabled = !interactive || s.control === 'none';
    takeover.disabled = !interactive || s.control !== 'none';
    if (s.control === 'person') setBanner(s.asks ? s.asks + ' Press Done when finished.' : 'You have control. Press Done to hand the page back.', 'person');
    else if (s.control === 'waiting') setBanner('Waiting for the running operation to finish before you get control...');
    else if (s.acting) setBanner('The agent or an operation is acting on this page.');
    else setBanner('');
  };
  ws.onopen = () => { document.body.dataset.state = 'open'; };
  ws.onmessage = (event) => {
    if (typeof event.data !== 'string') {
      const url = URL.createObjectURL(event.data);
      if (shown) URL.revokeObjectURL(shown);
      shown = url;
      screen.src = url;
      document.body.dataset.frames = String(++frames);
      return;
    }
    const message = JSON.parse(event.data);
    if (message.type === 'hello') {
      interactive = message.interactive;
      document.body.classList.toggle('readonly', !interactive);
    } else if (message.type === 'status') status(message);
    else if (message.type === 'copied') {
      document.body.dataset.copies = String(++copies);
      if (message.text && navigator.clipboard) navigator.clipboard.writeText(message.text).catch(() => {});
    }
    else if (message.type === 'refused') {
      // Input the page did not get is said, never lost without a word: how many so far, and why the latest.
      document.body.dataset.refused = String(message.total);
      const refused = $('refused');
      refused.textContent = message.total + (message.total === 1 ? ' input was' : ' inputs were') + ' not delivered. ' + message.message;
      refused.hidden = false;
    }
    else if (message.type === 'closed') setBanner(message.message, 'closed');
  };
  ws.onclose = (event) => {
    document.body.dataset.state = 'closed';
    done.disabled = takeover.disabled = true;
    if (banner.className !== 'closed') setBanner(event.reason || 'The live view has ended.', 'closed');
  };
  const point = (event) => {
    const box = screen.getBoundingClientRect();
    const clamp = (v) => Math.min(1, Math.max(0, v));
    return { x: clamp((event.clientX - box.left) / box.width), y: clamp((event.clientY - box.top) / box.height) };
  };
  const buttons = ['left', 'middle', 'right'];
  screen.addEventListener('pointerdown', (event) => {
    event.preventDefault();
    screen.focus();
    screen.setPointerCapture(event.pointerId);
    send({ type: 'mouse', action: 'down', ...point(event), button: buttons[event.button] || 'left', clickCount: Math.min(3, Math.max(1, event.detail || 1)) });
  });
  screen.addEventListener('pointerup', (event) => {
    event.preventDefault();
    send({ type: 'mouse', action: 'up', ...point(event), button: buttons[event.button] || 'left', clickCount: Math.min(3, Math.max(1, event.detail || 1)) });
  });
  screen.addEventListener('pointermove', (event) => {
    const now = performance.now();
    if (now - lastMove < 30) return;
    lastMove = now;
    send({ type: 'mouse', action: 'move', ...point(event) });
  });
  screen.addEventListener('wheel', (event) => {
    event.preventDefault();
    const scale = event.deltaMode === 1 ? 40 : event.deltaMode === 2 ? 800 : 1;
    send({ type: 'wheel', ...point(event), deltaX: event.deltaX * scale, deltaY: event.deltaY * scale });
  }, { passive: false });
  screen.addEventListener('contextmenu', (event) => event.preventDefault());
  const clipboardChord = (event) => (event.ctrlKey || event.metaKey) && ['c', 'v', 'x'].includes(event.key.toLowerCase());
  screen.addEventListener('keydown', (event) => {
    if (clipboardChord(event)) return;
    event.preventDefault();
    send({ type: 'key', action: 'down', key: event.key });
  });
  screen.addEventListener('keyup', (event) => {
    if (clipboardChord(event)) return;
    event.preventDefault();
    send({ type: 'key', action: 'up', key: event.key });
  });
  document.addEventListener('paste', (event) => {
    const text = event.clipboardData && event.clipboardData.getData('text/plain');
    if (!text) return;
    event.preventDefault();
    // The server takes texts of at most 20,000 characters: a longer paste goes in pieces, never split inside a character.
    const chars = Array.from(text);
    for (let i = 0; i < chars.length; i += 5000) send({ type: 'text', text: chars.slice(i, i + 5000).join('') });
  });
  document.addEventListener('copy', (event) => {
    if (document.activeElement !== screen) return;
    event.preventDefault();
    send({ type: 'copy' });
  });
  done.addEventListener('click', () => send({ type: 'done' }));
  takeover.addEventListener('click', () => send({ type: 'takeover' }));
})();
</script>
</body>
</html>
`;
}
