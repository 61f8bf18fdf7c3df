/**
 * The views and receipt parts the local runtime sends, read as the client reads them
 * (`src/sess/wire-reader.ts`), for tests that check the server side of the wire: each returns
 * the decoded value or throws naming what the reader refused.
 */
import {
  type ReceiptClaims,
  type ReceiptHeader,
  readAskView,
  readReceiptClaims,
  readReceiptHeader,
  readSessionView,
  type WireAskView,
  WireRefusal,
  type WireSessionView,
} from '../../src/sess/wire-reader.js';

function read<T>(noun: string, value: T | WireRefusal | undefined): T {
  if (value instanceof WireRefusal) throw new Error(`not ${noun}: wrong at ${value.path || 'the body'}`);
  if (value === undefined) throw new Error(`not ${noun}`);
  return value;
}

/** The Session view `json` is; throws when the client's reader refuses it. */
export const sessionViewOf = (json: unknown): WireSessionView =>
  read('a Session view', readSessionView(json));

/** The Ask view `json` is; throws when the client's reader refuses it. */
export const askViewOf = (json: unknown): WireAskView => read('an Ask view', readAskView(json));

/** A receipt's protected header; throws when the client's reader refuses it. */
export const receiptHeaderOf = (header: Record<string, unknown>): ReceiptHeader =>
  read('a receipt header', readReceiptHeader(header));

/**
 * A receipt's claims; throws when the client's reader refuses them, or when `act` is not
 * `link_holder` (which the reader leaves to the receipt check).
 */
export function receiptClaimsOf(payload: Record<string, unknown>): ReceiptClaims {
  if (payload.act !== 'link_holder') throw new Error('not receipt claims: act is not link_holder');
  return read('receipt claims', readReceiptClaims(payload));
}
