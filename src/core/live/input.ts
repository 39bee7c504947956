import type { Page } from 'playwright-core';
import { z } from 'zod';

const Fraction = z.number().min(0).max(1);
const Button = z.enum(['left', 'middle', 'right']);

/** What a viewer sends: pointer positions are fractions of the shown image, so any viewer size maps to the page. */
export const LiveInput = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('mouse'),
    action: z.enum(['move', 'down', 'up']),
    x: Fraction,
    y: Fraction,
    button: Button.optional(),
    clickCount: z.number().int().min(1).max(3).optional(),
  }),
  z.object({
    type: z.literal('wheel'),
    x: Fraction,
    y: Fraction,
    deltaX: z.number().min(-10_000).max(10_000),
    deltaY: z.number().min(-10_000).max(10_000),
  }),
  z.object({ type: z.literal('key'), action: z.enum(['down', 'up']), key: z.string().min(1).max(32) }),
  /** Typed or pasted text, inserted at the focus. */
  z.object({ type: z.literal('text'), text: z.string().max(20_000) }),
  /** Asks for the page's selected text, answered with a `copied` message. */
  z.object({ type: z.literal('copy') }),
  /** Takes control now (input does too). */
  z.object({ type: z.literal('takeover') }),
  /** Hands control back: the agent or the queued operations go on. */
  z.object({ type: z.literal('done') }),
]);
export type LiveInput = z.infer<typeof LiveInput>;

export type PageInput = Extract<LiveInput, { type: 'mouse' | 'wheel' | 'key' | 'text' }>;

export interface ViewportSize {
  width: number;
  height: number;
}

/** Replays one viewer event on the page with Playwright's mouse and keyboard, at page coordinates. */
export async function applyInput(page: Page, input: PageInput, size: ViewportSize): Promise<void> {
  switch (input.type) {
    case 'mouse': {
      await page.mouse.move(input.x * size.width, input.y * size.height);
      const options = { button: input.button ?? 'left', clickCount: input.clickCount ?? 1 } as const;
      if (input.action === 'down') await page.mouse.down(options);
      else if (input.action === 'up') await page.mouse.up(options);
      return;
    }
    case 'wheel':
      await page.mouse.move(input.x * size.width, input.y * size.height);
      await page.mouse.wheel(input.deltaX, input.deltaY);
      return;
    case 'key':
      if (input.action === 'up') return page.keyboard.up(input.key).catch(() => undefined);
      // A character the US layout lacks (é, ß, emoji) has no key to press: it is inserted as text instead.
      return page.keyboard.down(input.key).catch(async (err: unknown) => {
        if ([...input.key].length === 1) return page.keyboard.insertText(input.key);
        throw err;
      });
    case 'text':
      return page.keyboard.insertText(input.text);
  }
}

/**
 * The text selected on the page, in a text field as well as in the document, cut to `maxChars` in the page. A password
 * field's value is never answered, even selected.
 */
export function selectedText(page: Page, maxChars: number): Promise<string> {
  return page.evaluate((max) => {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    if (active instanceof HTMLInputElement && active.type === 'password') return '';
    if (active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement) {
      const { selectionStart, selectionEnd, value } = active;
      if (selectionStart !== null && selectionEnd !== null && selectionEnd > selectionStart)
        return value.slice(selectionStart, Math.min(selectionEnd, selectionStart + max));
    }
    return (window.getSelection()?.toString() ?? '').slice(0, max);
  }, maxChars);
}
