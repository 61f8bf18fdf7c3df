/**
 * A named double that wraps a real store view and counts its `listPage` calls, so a test can
 * bound how many store pages one `sess_list` reads. Every other call passes through unchanged.
 */
import type { HandleStore } from '../../src/core/contract/ports.js';

/** `view` with its `listPage` calls counted (`pages()`; `reset()` starts again from 0). */
export function countingListPages(view: HandleStore): {
  store: HandleStore;
  pages(): number;
  reset(): void;
} {
  let pages = 0;
  const { listPage } = view;
  if (listPage === undefined) throw new Error('the store has no listPage to count');
  const store: HandleStore = {
    get: (handle) => view.get(handle),
    create: (record) => view.create(record),
    update: (record, version) => view.update(record, version),
    delete: (handle, version) => view.delete(handle, version),
    listUnfinished: () => view.listUnfinished(),
    countUnfinished: () => view.countUnfinished(),
    listPage: (query) => {
      pages += 1;
      return listPage.call(view, query);
    },
  };
  if (view.listCursorKey !== undefined) store.listCursorKey = view.listCursorKey.bind(view);
  return {
    store,
    pages: () => pages,
    reset: () => {
      pages = 0;
    },
  };
}
