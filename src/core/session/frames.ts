import type { Frame, Page } from 'playwright-core';
import { ServiceError } from '../errors.js';

/** Short, stable frame ids, unique across every page of one session; the main frame of the first page is "0". */
export class FrameRegistry {
  private readonly ids = new WeakMap<Frame, string>();
  private readonly byId = new Map<string, WeakRef<Frame>>();
  private next = 0;

  idOf(frame: Frame): string {
    let id = this.ids.get(frame);
    if (id === undefined) {
      id = String(this.next++);
      this.ids.set(frame, id);
      this.byId.set(id, new WeakRef(frame));
    }
    return id;
  }

  /** The live frame with this id on `page`, or a `frame_not_found` error. */
  find(id: string, page: Page): Frame {
    const frame = this.byId.get(id)?.deref();
    if (!frame || frame.isDetached() || frame.page() !== page) {
      throw new ServiceError(
        'frame_not_found',
        `No frame with id "${id}" in this session's page. Frame ids come from session_start and session_list (frames) and from the page text.`,
      );
    }
    return frame;
  }

  /** Numbers the page's frames as they attach and forgets those that go (ad-heavy pages churn frames all the time). */
  watch(page: Page): void {
    this.idOf(page.mainFrame());
    page.on('frameattached', (frame) => this.idOf(frame));
    page.on('framedetached', (frame) => {
      const id = this.ids.get(frame);
      if (id !== undefined) this.byId.delete(id);
    });
  }
}
