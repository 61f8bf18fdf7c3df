/**
 * What every preflight stage shares: the {@link PreflightContext} a stage reads (and adds its
 * findings to), the {@link Refusal} a stage answers with, and the {@link PreflightStage} type.
 *
 * Types and one constructor only: no check lives here (each has its own module in this
 * directory) and nothing here runs the stages (`../preflight.ts` does).
 */

import type { DiagnosticEvent } from '../../index.js';
import type { IncomingRequest } from '../incoming.js';
import type { ResolvedHttpOptions, SessHttpPrincipal } from '../options.js';

/** A parsed body: the value and the first unsafe key found, if any. */
export type ParsedBody = { ok: true; value: unknown; unsafeKey?: string } | { ok: false };

/** One request on its way through the preflight. */
export interface PreflightContext {
  /** The handler's checked options. */
  readonly options: ResolvedHttpOptions;
  /** The request as a face handed it over: headers now, the body on demand. */
  readonly incoming: IncomingRequest;
  /** Fires at the request deadline or when the handler closes: a stage waiting on it ends. */
  readonly stop: AbortSignal;
  /** Aborted once the handler is closing, so a stop can be told apart from the deadline. */
  readonly closing: AbortSignal;
  /** The Host verdicts one pipeline remembers across its requests (`host.ts`). */
  readonly hostVerdicts: Map<string, boolean>;
  /** The one `Request` of the exchange, without a body; set by the method stage. */
  request?: Request;
  /** A snapshot of the principal `authenticate` returned; set by the authentication stage. */
  principal?: SessHttpPrincipal;
  /** The body as read (a POST only); set by the body stage. */
  bytes?: Uint8Array;
  /** The body parsed once, with its first unsafe key; set by the body stage. */
  parsed?: ParsedBody;
}

/** A stage's refusal: the answer, the diagnostics event it reports, and whether the connection closes. */
export interface Refusal {
  response: Response;
  /** A fixed event name (`http.host_rejected`, …): never anything the client sent. */
  event: string;
  /**
   * What the event is about: the option to change, the field that is wrong and what it must be,
   * by name only; for a refused `Host` or `Origin`, also the value received (never a secret),
   * escaped and bounded by `receivedValue`.
   */
  about?: Pick<DiagnosticEvent, 'variable' | 'field' | 'expected' | 'received'>;
  /** True when the body was not (fully) read, so the connection cannot serve another request. */
  closeConnection: boolean;
}

/**
 * One check of the preflight: a refusal, or `undefined` to let the request on. A stage that
 * waits (on `authenticate`, on the body) returns a promise; the others answer synchronously.
 */
export type PreflightStage = (ctx: PreflightContext) => Refusal | undefined | Promise<Refusal | undefined>;

/** A refusal that closes the connection unless `closeConnection` says otherwise. */
export function refusal(
  response: Response,
  event: string,
  closeConnection = true,
  about?: Refusal['about'],
): Refusal {
  return about === undefined
    ? { response, event, closeConnection }
    : { response, event, closeConnection, about };
}

/** The `Request` the method stage built: a stage after it that finds none runs out of order. */
export function requestOf(ctx: PreflightContext): Request {
  if (ctx.request === undefined) throw new Error('The preflight ran a stage before the method stage.');
  return ctx.request;
}
