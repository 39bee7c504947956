import type { Dialog, Download, Page } from 'playwright-core';
import type { EventLog } from '../page/events.js';

/** Dialogs never block: alerts and beforeunload are accepted, confirm and prompt dismissed. */
export function answerDialog(dialog: Dialog, page: Page, log: EventLog): void {
  const type = dialog.type();
  const accept = type === 'alert' || type === 'beforeunload';
  log.record({
    type: 'dialog',
    message: `${type} "${dialog.message().slice(0, 200)}" was ${accept ? 'accepted' : 'dismissed'} by policy.`,
    // The page that asked, which may be one just replaced, not the session's current page.
    url: (dialog.page() ?? page).url(),
  });
  (accept ? dialog.accept() : dialog.dismiss()).catch(() => undefined);
}

/** Downloads are refused: a session has no place to keep files. */
export function refuseDownload(download: Download, log: EventLog): void {
  log.record({ type: 'download', message: 'A download was refused by policy.', url: download.url() });
  download.cancel().catch(() => undefined);
}

/** Popups would steal focus from the session's page: they are closed, and the event says where they went. */
export function closePopup(popup: Page, log: EventLog): void {
  log.record({ type: 'popup', message: 'A popup window was closed by policy; navigate to its URL to follow it.', url: popup.url() });
  popup.close().catch(() => undefined);
}

/** The policy every watched page gets: dialogs answered, downloads refused. */
export function applyPagePolicy(page: Page, log: EventLog): void {
  page.on('dialog', (dialog) => answerDialog(dialog, page, log));
  page.on('download', (download) => refuseDownload(download, log));
}
