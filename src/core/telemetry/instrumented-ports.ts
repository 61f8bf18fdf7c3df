/**
 * The ports of one tool call, seen through {@link Telemetry}: every Sess call and store operation
 * of the call runs in a span of its own (a child of the tool call's), and records its duration or
 * conflicts. Each wrapper passes every argument and result through unchanged.
 */
import type { CallAuthority, HandleStore, SessApi } from '../contract/ports.js';
import type { Telemetry } from './telemetry.js';

/** `sess` with each call recorded under its method's name. */
function instrumentedSess(sess: SessApi, t: Telemetry): SessApi {
  return {
    createSession: (input, options) => t.sess('createSession', () => sess.createSession(input, options)),
    getSession: (id, options) => t.sess('getSession', () => sess.getSession(id, options)),
    waitSession: (id, known, options) => t.sess('waitSession', () => sess.waitSession(id, known, options)),
    publish: (id, input, options) => t.sess('publish', () => sess.publish(id, input, options)),
    complete: (id, input, options) => t.sess('complete', () => sess.complete(id, input, options)),
    withdrawSession: (id, input, options) =>
      t.sess('withdrawSession', () => sess.withdrawSession(id, input, options)),
    closeAsk: (id, input, options) => t.sess('closeAsk', () => sess.closeAsk(id, input, options)),
    createAsk: (input, options) => t.sess('createAsk', () => sess.createAsk(input, options)),
    getAsk: (id, options) => t.sess('getAsk', () => sess.getAsk(id, options)),
    verifyResponse: (input, options) => t.sess('verifyResponse', () => sess.verifyResponse(input, options)),
  };
}

/** `store` with each operation recorded under its method's name; optional methods kept optional. */
function instrumentedStore(store: HandleStore, t: Telemetry): HandleStore {
  const out: HandleStore = {
    get: (handle) => t.store('get', () => store.get(handle)),
    create: (record, limits) => t.store('create', () => store.create(record, limits)),
    update: (record, expected) => t.store('update', () => store.update(record, expected)),
    delete: (handle, expected) => t.store('delete', () => store.delete(handle, expected)),
    listUnfinished: () => t.store('listUnfinished', () => store.listUnfinished()),
    countUnfinished: () => t.store('countUnfinished', () => store.countUnfinished()),
  };
  const { listPage, listCursorKey } = store;
  if (listPage !== undefined)
    out.listPage = (query) => t.store('listPage', () => listPage.call(store, query));
  // The cursor key is a secret and never leaves the store's answer: no span needed, none made.
  if (listCursorKey !== undefined) out.listCursorKey = () => listCursorKey.call(store);
  return out;
}

/** The authority of one tool call with its Sess client and store instrumented. */
export function instrumentedAuthority(auth: CallAuthority, t: Telemetry): CallAuthority {
  return { ...auth, sess: instrumentedSess(auth.sess, t), store: instrumentedStore(auth.store, t) };
}
