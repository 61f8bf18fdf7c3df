/**
 * The `sess_list` cursor key of this process: {@link LIST_CURSOR_KEY_BYTES} random bytes drawn
 * once, on first use, from the platform's CSPRNG. The memory store hands it out as its
 * `listCursorKey` (its records live no longer than the process), and the engine signs with it for
 * a store that has no key of its own.
 *
 * It deliberately is never written anywhere: a durable store keeps a key of its own (the file
 * store's key file, the PostgreSQL store's key row), so its cursors outlive a restart.
 */
import { LIST_CURSOR_KEY_BYTES } from '../contract/ports.js';

let key: Uint8Array | undefined;

/** This process's cursor key (the same bytes on every call; do not change them). */
export function processCursorKey(): Uint8Array {
  if (key === undefined) {
    key = new Uint8Array(LIST_CURSOR_KEY_BYTES);
    globalThis.crypto.getRandomValues(key);
  }
  return key;
}
