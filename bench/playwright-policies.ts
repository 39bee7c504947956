/**
 * Scripted policies for Playwright MCP 0.0.83, written as its client would: refs from its snapshot (`[ref=e12]`),
 * its browser_* tools, selectors from visible words where its snapshot has no ref, and points from its screenshot
 * (the vision capability's browser_mouse_click_xy) where there is nothing else. Its actions answer a link to a file
 * with the snapshot, not the snapshot: a client that wants to see the page calls browser_snapshot.
 */
import { ringCenter } from '../test/fixtures/task-policies.js';
import type { PeerDoor } from './peer-doors.js';
import { iconInBand } from './screen.js';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The snapshot text browser_snapshot answers. */
async function snapshot(door: PeerDoor, args: Record<string, unknown> = {}): Promise<string> {
  const answer = await door.call('browser_snapshot', args);
  if (answer.isError) throw new Error(`browser_snapshot failed: ${answer.text.slice(0, 300)}`);
  return answer.text;
}

/** One action; an error answer (a ref gone, a timeout) fails the task. */
async function act(door: PeerDoor, tool: string, args: Record<string, unknown>): Promise<string> {
  const answer = await door.call(tool, args);
  if (answer.isError || /^### Error/m.test(answer.text)) throw new Error(`${tool} failed: ${answer.text.slice(0, 400)}`);
  return answer.text;
}

/** The ref on the first snapshot line matching `pattern`. */
export function refOf(text: string, pattern: RegExp): string {
  for (const line of text.split('\n')) {
    if (!pattern.test(line)) continue;
    const ref = /\[ref=(\w+)\]/.exec(line)?.[1];
    if (ref) return ref;
  }
  throw new Error(`no ref on a line matching ${pattern} in:\n${text}`);
}

/** A line's text after its `: ` (YAML quotes removed). */
function valueOf(line: string): string {
  const value = /\]:\s(.*)$/.exec(line)?.[1]?.trim() ?? '';
  return /^(["']).*\1$/.test(value) ? value.slice(1, -1) : value;
}

/** TodoMVC: add three items, complete one, rename one by double-click, filter, clear the completed; true when done. */
export async function todoMvc(door: PeerDoor, url: string): Promise<boolean> {
  await act(door, 'browser_navigate', { url });
  let text = await snapshot(door);
  const input = refOf(text, /textbox "(New Todo Input|What needs to be done\?)"/);
  for (const item of ['buy milk', 'walk dog', 'call mom']) await act(door, 'browser_type', { target: input, text: item, submit: true });
  text = await snapshot(door);
  // An item is its checkbox line followed by its label's line.
  const lines = text.split('\n');
  const label = lines.findIndex((line) => /\]: walk dog$/.test(line));
  await act(door, 'browser_click', { target: refOf(lines[label - 1]!, /checkbox/) });
  await act(door, 'browser_click', { target: refOf(text, /\]: buy milk$/), doubleClick: true });
  text = await snapshot(door);
  await act(door, 'browser_type', { target: refOf(text, /textbox "Edit[^"]*".*: buy milk$/), text: 'buy oat milk', submit: true });
  text = await snapshot(door);
  await act(door, 'browser_click', { target: refOf(text, /link "Active"/) });
  if (/\]: walk dog$/m.test(await snapshot(door))) return false;
  await act(door, 'browser_click', { target: refOf(text, /link "Completed"/) });
  text = await snapshot(door);
  await act(door, 'browser_click', { target: refOf(text, /button "Clear completed"/) });
  await act(door, 'browser_click', { target: refOf(text, /link "All"/) });
  text = await snapshot(door);
  return (
    /\]: buy oat milk$/m.test(text) &&
    /\]: call mom$/m.test(text) &&
    !/walk dog|\]: buy milk$/m.test(text) &&
    /2 items left|: "2"\n\s*- text: items left/.test(text)
  );
}

/** After START: the snapshot, whose first text line is the task's instruction. */
export async function startEpisode(door: PeerDoor, url: string): Promise<string> {
  await act(door, 'browser_navigate', { url });
  await act(door, 'browser_click', { target: refOf(await snapshot(door), /: START$/) });
  return snapshot(door);
}

/** The instruction: the first line of the snapshot that carries text. */
function instruction(text: string): string {
  return valueOf(text.split('\n').find((line) => /\[ref=\w+\]: \S/.test(line)) ?? '');
}

/** "Last reward: 1.00" in the snapshot, or undefined. */
export function lastReward(text: string): number | undefined {
  const match = /Last reward:\s*(-?\d+(?:\.\d+)?)/.exec(text);
  return match ? Number(match[1]) : undefined;
}

type Policy = (door: PeerDoor, text: string) => Promise<void>;

const submit = (door: PeerDoor, text: string) => act(door, 'browser_click', { target: refOf(text, /button "Submit"/) });

/** The same MiniWoB++ tasks as test/fixtures/task-policies.ts, through Playwright MCP's tools. */
export const MINIWOB: Record<string, Policy> = {
  'click-tab': async (door, text) => {
    const tab = /Click on (Tab #\d+)/.exec(instruction(text))![1]!;
    await act(door, 'browser_click', { target: refOf(text, new RegExp(`link "${escape(tab)}"`)) });
  },
  'click-collapsible': async (door, text) => {
    await act(door, 'browser_click', { target: refOf(text, /tab "Section/) });
    await submit(door, text);
  },
  'click-dialog': async (door, text) => {
    await act(door, 'browser_click', { target: refOf(text, /button "Close"/) });
  },
  'click-menu': async (door, text) => {
    const path = /Select (.+)/.exec(instruction(text))![1]!.trim().split('>');
    let shown = text;
    for (const [i, name] of path.entries()) {
      const target = refOf(shown, new RegExp(`menuitem "${escape(name)}"`));
      if (i === path.length - 1) await act(door, 'browser_click', { target });
      else {
        await act(door, 'browser_hover', { target });
        // The submenu opens 300 ms after the hover, later than its hover answers (waiting for the next name's text
        // returns at once: the instruction shows it), so a second's wait.
        await act(door, 'browser_wait_for', { time: 1 });
        shown = await snapshot(door);
      }
    }
  },
  'click-scroll-list': async (door, text) => {
    const names = /Select (.+) from the scroll list/.exec(instruction(text))![1]!.split(/, | and /);
    await act(door, 'browser_select_option', { target: refOf(text, /- listbox/), values: names });
    await submit(door, text);
  },
  'drag-box': async (door, text) => {
    const [small, large] = [refOf(text, /\]: s$/), refOf(text, /\]: L$/)];
    const dragged = await door.call('browser_drag', { startTarget: small, endTarget: large });
    // When the small box already covers the large one's centre, its drag times out ("intercepts pointer events"):
    // the boxes' centres from the snapshot's boxes, dragged by coordinates.
    if (dragged.isError || /^### Error/m.test(dragged.text)) {
      const boxed = await snapshot(door, { boxes: true });
      const [from, to] = [small, large].map((ref) => {
        const [x, y, width, height] = /\[box=(\d+),(\d+),(\d+),(\d+)\]/
          .exec(boxed.split('\n').find((line) => line.includes(`[ref=${ref}]`))!)!
          .slice(1)
          .map(Number) as [number, number, number, number];
        return { x: x + width / 2, y: y + height / 2 };
      });
      await act(door, 'browser_mouse_drag_xy', { startX: from!.x, startY: from!.y, endX: to!.x, endY: to!.y });
    }
    await submit(door, text);
  },
  // The trash icon is no part of its snapshot: the sender's row from the snapshot's boxes, the icon in that row of a
  // screenshot, clicked by coordinates.
  'email-inbox-delete': async (door, text) => {
    const sender = /email by (\S+) and/.exec(instruction(text))![1]!;
    const boxed = await snapshot(door, { boxes: true });
    const lines = boxed.split('\n');
    const at = lines.findIndex((line) => new RegExp(`\\]: ${escape(sender)}$`).test(line));
    const row = /\[box=(\d+),(\d+),(\d+),(\d+)\]/.exec(lines[at - 1] ?? '');
    if (!row) throw new Error(`no box for the row of ${sender}`);
    const [x, y, width, height] = row.slice(1).map(Number) as [number, number, number, number];
    const shot = await door.call('browser_take_screenshot', {});
    if (!shot.image) throw new Error('no image in the screenshot answer');
    const icon = iconInBand(shot.image, { x0: x + width, y0: y, y1: y + height });
    await act(door, 'browser_mouse_click_xy', icon);
  },
  'circle-center': async (door, text) => {
    const shot = await door.call('browser_take_screenshot', {});
    if (!shot.image) throw new Error('no image in the screenshot answer');
    await act(door, 'browser_mouse_click_xy', ringCenter(shot.image));
    await submit(door, text);
  },
  'click-checkboxes': async (door, text) => {
    const names = /Select (.*) and click Submit/
      .exec(instruction(text))![1]!
      .split(', ')
      .filter((name) => name && name !== 'nothing');
    if (names.length)
      await act(door, 'browser_fill_form', {
        fields: names.map((name) => ({
          target: refOf(text, new RegExp(`checkbox "${escape(name)}"`)),
          name,
          type: 'checkbox',
          value: 'true',
        })),
      });
    await submit(door, text);
  },
  'click-option': async (door, text) => {
    const name = /Select (\S+) and click Submit/.exec(instruction(text))![1]!;
    await act(door, 'browser_click', { target: refOf(text, new RegExp(`radio "${escape(name)}"`)) });
    await submit(door, text);
  },
  'enter-text': async (door, text) => {
    const word = /"([^"]+)"/.exec(instruction(text))![1]!;
    await act(door, 'browser_type', { target: refOf(text, /- textbox/), text: word });
    await submit(door, text);
  },
  'login-user': async (door, text) => {
    const [user, password] = [...instruction(text).matchAll(/"([^"]+)"/g)].map((match) => match[1]!);
    const boxes = [...text.matchAll(/- textbox \[ref=(\w+)\]/g)].map((match) => match[1]!);
    await act(door, 'browser_fill_form', {
      fields: [
        { target: boxes[0], name: 'Username', type: 'textbox', value: user },
        { target: boxes[1], name: 'Password', type: 'textbox', value: password },
      ],
    });
    await act(door, 'browser_click', { target: refOf(text, /button "Login"/) });
  },
  // The links are spans in a paragraph, without refs in its snapshot: a selector from the word (the first if it repeats).
  'click-link': async (door, text) => {
    const word = /"([^"]+)"/.exec(instruction(text))![1]!;
    await act(door, 'browser_click', { target: `text=${JSON.stringify(word)} >> nth=0` });
  },
  'choose-list': async (door, text) => {
    const name = /Select (.+) from the list/.exec(instruction(text))![1]!;
    await act(door, 'browser_select_option', { target: refOf(text, /- combobox/), values: [name] });
    await submit(door, text);
  },
};
