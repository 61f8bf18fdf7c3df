/**
 * The Sess requests a record saves before it sends them (create, publish, complete, withdraw, an
 * Ask's create and close), exactly as they are sent and replayed. Plain data types: the ports
 * take them (`contract/ports.ts` names them again) and the record keeps them (`record.ts`).
 *
 * It holds no behaviour and knows no wire: how a request becomes an HTTP body is `src/sess`'s.
 */
import type { Surface } from './surface.js';

/** Options of an Ask (`respondents` on `sess_ask`), in seconds. */
export interface AskRespondentsOptions {
  max: number;
  name?: boolean;
  expiresIn?: number;
  respondentExpiresIn?: number;
}

/** A create request, exactly as it is saved before it is sent. */
export interface CreateSessionInput {
  surface: Surface;
  expiresIn?: number;
  idempotencyKey: string;
}

/** A create-Ask request, exactly as it is saved before it is sent. */
export interface CreateAskInput {
  surface: Surface;
  expiresIn?: number;
  respondents: AskRespondentsOptions;
  idempotencyKey: string;
}

/** A publish request, exactly as it is saved before it is sent. */
export interface PublishInput {
  expectedRevision: number;
  responseEventId: string;
  surface: Surface;
  idempotencyKey: string;
}

/** A complete request, exactly as it is saved before it is sent. */
export interface CompleteInput {
  expectedRevision: number;
  responseEventId: string;
  idempotencyKey: string;
}

/** A withdraw request, exactly as it is saved before it is sent. */
export interface WithdrawInput {
  /** The current revision: the one without an answer that is taken back. */
  expectedRevision: number;
  /** What the person's page shows (at most 160 code points). */
  reason?: string;
  idempotencyKey: string;
}

/** An Ask close request, exactly as it is saved before it is sent. */
export interface CloseAskInput {
  /** What the pages of respondents who have not answered show (at most 160 code points). */
  reason?: string;
  idempotencyKey: string;
}
