/**
 * Scripted policies for chrome-devtools-mcp 1.11.0, written as its client would: uids from its take_snapshot
 * (`uid=2_4 checkbox "milk"`, text nodes included), its click/fill/fill_form/hover/drag/press_key/type_text tools
 * (asking for the snapshot with an action where the next step needs it), and points from its screenshot
 * (--experimentalVision: click_at) where there is nothing else. Every page-scoped tool takes the pageId that
 * list_pages shows (1: the only page).
 */
import { ringCenter } from '../test/fixtures/task-policies.js';
import type { PeerDoor } from './peer-doors.js';
import { iconColumn } from './screen.js';

const PAGE = { pageId: 1 };
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The snapshot take_snapshot answers. */
export async function snapshot(door: PeerDoor): Promise<string> {
  return act(door, 'take_snapshot', {});
}

async function act(door: PeerDoor, tool: string, args: Record<string, unknown>): Promise<string> {
  const answer = await door.call(tool, { ...PAGE, ...args });
  if (answer.isError) throw new Error(`${tool} failed: ${answer.text.slice(0, 400)}`);
  return answer.text;
}

/** The uid on the first snapshot line matching `pattern`. */
export function uidOf(text: string, pattern: RegExp): string {
  for (const line of text.split('\n')) if (pattern.test(line)) return /uid=(\S+)/.exec(line)![1]!;
  throw new Error(`no uid on a line matching ${pattern} in:\n${text}`);
}

/** The words of a snapshot as a reader sees them: each line's quoted name, joined (text nodes come one per line). */
export function textOf(snapshot: string): string {
  return (
    snapshot
      .split('\n')
      // A text node's line is its quoted text alone (quotes inside it unescaped); an element's name is followed by attributes.
      .map((line) => (/^\s*uid=\S+ "(.*)"$/.exec(line) ?? /uid=\S+ \w+ "(.*?)"(?: |$)/.exec(line))?.[1] ?? '')
      .join('')
      .replace(/\s+/g, ' ')
  );
}

/** TodoMVC: add three items, complete one, rename one by double-click, filter, clear the completed; true when done. */
export async function todoMvc(door: PeerDoor, url: string): Promise<boolean> {
  await act(door, 'navigate_page', { type: 'url', url });
  let text = await snapshot(door);
  const input = uidOf(text, /textbox "(New Todo Input|What needs to be done\?)"/);
  if (!/focused/.test(text.split('\n').find((line) => line.includes(`uid=${input} `)) ?? '')) await act(door, 'click', { uid: input });
  for (const item of ['buy milk', 'walk dog', 'call mom']) await act(door, 'type_text', { text: item, submitKey: 'Enter' });
  text = await snapshot(door);
  // An item is its checkbox line followed by its label's line.
  const lines = text.split('\n');
  const label = lines.findIndex((line) => /"walk dog"$/.test(line));
  await act(door, 'click', { uid: uidOf(lines[label - 1]!, /checkbox/) });
  text = await act(door, 'click', { uid: uidOf(text, /"buy milk"$/), dblClick: true, includeSnapshot: true });
  const field = uidOf(text, /textbox.*"buy milk"/);
  await act(door, 'fill', { uid: field, value: 'buy oat milk' });
  await act(door, 'press_key', { key: 'Enter' });
  text = await snapshot(door);
  const shown = await act(door, 'click', { uid: uidOf(text, /link "Active"/), includeSnapshot: true });
  if (/"walk dog"/.test(shown)) return false;
  await act(door, 'click', { uid: uidOf(text, /link "Completed"/) });
  text = await snapshot(door);
  await act(door, 'click', { uid: uidOf(text, /button "Clear completed"/) });
  text = await act(door, 'click', { uid: uidOf(text, /link "All"/), includeSnapshot: true });
  const words = textOf(text);
  return /"buy oat milk"/.test(text) && /"call mom"/.test(text) && !/walk dog|"buy milk"/.test(text) && /2 items left/.test(words);
}

/** After START: the snapshot (asked for with the click), whose first text line is the task's instruction. */
export async function startEpisode(door: PeerDoor, url: string): Promise<string> {
  await act(door, 'navigate_page', { type: 'url', url });
  return act(door, 'click', { uid: uidOf(await snapshot(door), /"START"$/), includeSnapshot: true });
}

/** The instruction: the text nodes that open the page, up to its first element with a role (it may take several). */
function instruction(text: string): string {
  const lines = text.split('\n');
  const first = lines.findIndex((line) => /RootWebArea/.test(line)) + 1;
  const end = lines.findIndex((line, i) => i >= first && !/^\s*uid=\S+ "/.test(line));
  return textOf(lines.slice(first, end < 0 ? undefined : end).join('\n'));
}

/** "Last reward: 1.00" in the snapshot's words, or undefined. */
export function lastReward(text: string): number | undefined {
  const match = /Last reward:\s*(-?\d+(?:\.\d+)?)/.exec(textOf(text));
  return match ? Number(match[1]) : undefined;
}

type Policy = (door: PeerDoor, text: string) => Promise<void>;

const submit = (door: PeerDoor, text: string) => act(door, 'click', { uid: uidOf(text, /button "Submit"/) });

/** Tasks its tools cannot do, and why (shown in the bench's notes). */
export const NOT_POSSIBLE: Record<string, string> = {};

/** The same MiniWoB++ tasks as test/fixtures/task-policies.ts, through chrome-devtools-mcp's tools. */
export const MINIWOB: Record<string, Policy> = {
  'click-tab': async (door, text) => {
    const tab = /Click on (Tab #\d+)/.exec(instruction(text))![1]!;
    await act(door, 'click', { uid: uidOf(text, new RegExp(`link "${escape(tab)}"`)) });
  },
  'click-collapsible': async (door, text) => {
    await act(door, 'click', { uid: uidOf(text, /tab "Section/) });
    await submit(door, text);
  },
  'click-dialog': async (door, text) => {
    await act(door, 'click', { uid: uidOf(text, /button "Close"/) });
  },
  'click-menu': async (door, text) => {
    const path = /Select (.+)/.exec(instruction(text))![1]!.trim().split('>');
    let shown = text;
    for (const [i, name] of path.entries()) {
      const uid = uidOf(shown, new RegExp(`menuitem "${escape(name)}"`));
      if (i === path.length - 1) await act(door, 'click', { uid });
      else {
        shown = await act(door, 'hover', { uid, includeSnapshot: true });
        // The submenu opens 300 ms after the hover, and its tools have no timed wait (wait_for's text is already in
        // the instruction): it looks again after a second, as a model's next turn would (3 looks at most).
        const next = new RegExp(`menuitem "${escape(path[i + 1]!)}"`);
        for (let look = 0; look < 3 && !next.test(shown); look++) {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          shown = await snapshot(door);
        }
      }
    }
  },
  // A <select multiple>: its click selects one option natively; more are added with Control held, which none of
  // its tools does, so each further option is reached from the keyboard (Control+arrows move, Control+Space adds).
  'click-scroll-list': async (door, text) => {
    const names = /Select (.+) from the scroll list/.exec(instruction(text))![1]!.split(/, | and /);
    const options = text
      .split('\n')
      .filter((line) => /option "/.test(line))
      .map((line) => /option "(.*?)"/.exec(line)![1]!);
    const wanted = names.map((name) => options.indexOf(name)).sort((a, b) => a - b);
    await act(door, 'click', { uid: uidOf(text, new RegExp(`option "${escape(options[wanted[0]!]!)}"`)) });
    for (let i = 1; i < wanted.length; i++) {
      for (let step = wanted[i - 1]!; step < wanted[i]!; step++) await act(door, 'press_key', { key: 'Control+ArrowDown' });
      await act(door, 'press_key', { key: 'Control+Space' });
    }
    await submit(door, text);
  },
  'drag-box': async (door, text) => {
    await act(door, 'drag', { from_uid: uidOf(text, /"s"$/), to_uid: uidOf(text, /"L"$/) });
    await submit(door, text);
  },
  // The trash icons are no part of its snapshot and it gives no boxes: the rows' order from the snapshot, the icons
  // from a screenshot (the rightmost of each row's, right of the senders, the rows last on the screen), the sender's clicked.
  'email-inbox-delete': async (door, text) => {
    const sender = /email by (\S+) and/.exec(instruction(text))![1]!;
    const lines = text.split('\n');
    const heading = lines.findIndex((line) => /heading "Primary"/.test(line));
    const end = lines.findIndex((line) => /"Last reward:"/.test(line));
    // Each row shows three text nodes: sender, subject, the body's start.
    const rows = lines.slice(heading + 1, end).filter((_, i) => i % 3 === 0);
    const row = rows.findIndex((line) => new RegExp(`"${escape(sender)}"$`).test(line));
    const shot = await door.call('take_screenshot', { ...PAGE });
    if (!shot.image) throw new Error('no image in the screenshot answer');
    const icons = iconColumn(shot.image, 110, 160);
    const icon = icons[icons.length - rows.length + row];
    if (row < 0 || !icon) throw new Error(`no icon for row ${row} of ${rows.length} among ${icons.length}`);
    await act(door, 'click_at', icon);
  },
  'circle-center': async (door, text) => {
    const shot = await door.call('take_screenshot', { ...PAGE });
    if (!shot.image) throw new Error('no image in the screenshot answer');
    await act(door, 'click_at', ringCenter(shot.image));
    await submit(door, text);
  },
  'click-checkboxes': async (door, text) => {
    const names = /Select (.*) and click Submit/
      .exec(instruction(text))![1]!
      .split(', ')
      .filter((name) => name && name !== 'nothing');
    if (names.length)
      await act(door, 'fill_form', {
        elements: names.map((name) => ({ uid: uidOf(text, new RegExp(`checkbox "${escape(name)}"`)), value: 'true' })),
      });
    await submit(door, text);
  },
  'click-option': async (door, text) => {
    const name = /Select (\S+) and click Submit/.exec(instruction(text))![1]!;
    await act(door, 'click', { uid: uidOf(text, new RegExp(`radio "${escape(name)}"`)) });
    await submit(door, text);
  },
  'enter-text': async (door, text) => {
    const word = /"([^"]+)"/.exec(instruction(text))![1]!;
    await act(door, 'fill', { uid: uidOf(text, / textbox/), value: word });
    await submit(door, text);
  },
  'login-user': async (door, text) => {
    const [user, password] = [...instruction(text).matchAll(/"([^"]+)"/g)].map((match) => match[1]!);
    const boxes = [...text.matchAll(/uid=(\S+) textbox/g)].map((match) => match[1]!);
    await act(door, 'fill_form', {
      elements: [
        { uid: boxes[0], value: user },
        { uid: boxes[1], value: password },
      ],
    });
    await act(door, 'click', { uid: uidOf(text, /button "Login"/) });
  },
  // Its snapshot has the link's words as a text node of their own: that node is clicked.
  'click-link': async (door, text) => {
    const word = /"([^"]+)"/.exec(instruction(text))![1]!;
    const body = text.split('\n').slice(3).join('\n');
    await act(door, 'click', { uid: uidOf(body, new RegExp(`^\\s*uid=\\S+ "${escape(word)}"$`)) });
  },
  'choose-list': async (door, text) => {
    const name = /Select (.+) from the list/.exec(instruction(text))![1]!;
    await act(door, 'fill', { uid: uidOf(text, / combobox/), value: name });
    await submit(door, text);
  },
};
