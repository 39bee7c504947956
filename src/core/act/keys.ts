import type { Locator, Page } from 'playwright-core';
import { abortable, ServiceError, throwIfAborted } from '../errors.js';
import { bounded } from '../page/cdp.js';

export interface Typing {
  /** Longest the whole typing may take, ms (as pressSequentially's timeout). */
  timeout: number;
  /** The call's cancel: typing stops between two keys once it fires. */
  signal?: AbortSignal;
  /** The element as the result names it, for the timeout's message. */
  target: string;
}

/** Where the caret was put before typing: at the end, left where it was (the field had focus), or not settable. */
type Caret = 'end' | 'kept' | 'no-selection';

/**
 * Types `text` into the element key by key, as Playwright's pressSequentially does (a key of the keyboard is pressed,
 * any other character inserted), with two differences. A field that did not have focus gets the caret at its end, as
 * the docs say (Playwright's puts it at the start of an input); one that had focus types where its caret or selection
 * is (selectText, then type over it). And each key is its own call: the call's cancel stops the typing between two
 * keys, so a client that went away leaves no keys landing after it.
 */
export async function typeAtEnd(page: Page, element: Locator, text: string, { timeout, signal, target }: Typing): Promise<void> {
  const deadline = Date.now() + timeout;
  const caret: Caret = await element.evaluate(
    (el) => {
      // No named functions in here: this runs in the page as source.
      if ((el.getRootNode() as Document | ShadowRoot).activeElement === el) return 'kept';
      (el as HTMLElement).focus();
      if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
        try {
          el.setSelectionRange(el.value.length, el.value.length);
        } catch {
          // email and number fields have no selection to set: End moves their caret.
          return 'no-selection';
        }
      } else if ((el as HTMLElement).isContentEditable) {
        const range = document.createRange();
        range.selectNodeContents(el);
        range.collapse(false);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
      return 'end';
    },
    undefined,
    { timeout },
  );
  if (caret === 'no-selection') await bounded(page.keyboard.press('End'), timeout, 'moving the caret to the end');
  const total = [...text].length;
  let typed = 0;
  for (const char of text) {
    throwIfAborted(signal);
    const left = deadline - Date.now();
    if (left <= 0)
      throw new ServiceError(
        'action_timeout',
        `type into ${target} typed ${typed} of ${total} characters within ${timeout} ms; pass a longer timeoutMs, or use fill.`,
        { details: { typed, total, timeoutMs: timeout } },
      );
    await abortable(bounded(page.keyboard.type(char), left, `typing character ${typed + 1} of ${total}`), signal);
    typed++;
  }
}
