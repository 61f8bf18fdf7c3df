/**
 * Shared fixtures of the Sess client tests: the local runtime's lifecycle, a Surface, a client
 * bound to a local runtime, the exact input that proves an answer, and small assertions on
 * `SessApiError`. Not a test file itself.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect } from 'vitest';
import {
  type SessApi,
  SessApiError,
  type SessApiErrorKind,
  type SessionView,
  type VerifyResponseInput,
} from '../../src/core/contract/ports.js';
import type { Answer, Surface } from '../../src/core/model/surface.js';
import { createSessClient, type SessClientOptions } from '../../src/sess/client.js';
import type { WireSessionView } from '../../src/sess/wire-reader.js';
import type { LocalSess } from '../../src/testing/index.js';
import { type UseLocalSessOptions, useLocalSess } from '../support/local-sess.js';
import { messageField, surfaceOf } from '../support/surfaces.js';

/**
 * The test file's local runtime: the shared lifecycle of `test/support` (`useLocalSess`), with
 * its faults cleared after each test. Returns a stand-in that forwards to the running runtime,
 * so a test file names it once.
 *
 * @example
 * const sess = useRuntime();
 */
export function useRuntime(options?: UseLocalSessOptions): LocalSess {
  const runtime = useLocalSess(options);
  afterEach(() => {
    runtime().faults.clear();
  });
  return new Proxy({} as LocalSess, {
    get(_target, name) {
      const current = runtime();
      const value: unknown = Reflect.get(current, name);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}

/** What a publish or a complete after the latest answer of `view` carries, with a fresh key. */
export function afterAnswer(view: SessionView): {
  expectedRevision: number;
  responseEventId: string;
  idempotencyKey: string;
} {
  return {
    expectedRevision: view.revision,
    responseEventId: view.responses.at(-1)!.eventId,
    idempotencyKey: idemKey(),
  };
}

/** The exact input that proves the answer at `revision` (default: the latest) of `view`. */
export function proofOf(view: SessionView, surface: Surface, revision?: number): VerifyResponseInput {
  const r = revision === undefined ? view.responses.at(-1)! : view.responses[revision - 1]!;
  return {
    sessionId: view.sessionId,
    revision: r.revision,
    eventId: r.eventId,
    surface,
    answer: r.answer,
    receipt: r.receipt,
  };
}

/** A Surface with one editable text field and two actions. */
export function surface(title = 'Approve this commit?'): Surface {
  return surfaceOf(title, [{ type: 'text', text: 'One line changed.' }, messageField()]);
}

/** A recognisable answer value, so tests can search for it in error messages. */
export const SECRET_ANSWER_VALUE = 'answer-value-7f3c9e';

/** An answer to {@link surface}. */
export function answer(message = SECRET_ANSWER_VALUE): Answer {
  return { action: 'approve', values: { message } };
}

let keyCounter = 0;
/** A fresh idempotency key. */
export function idemKey(): string {
  keyCounter += 1;
  return `test-${keyCounter}-${crypto.randomUUID()}`;
}

/** A fresh Ask of the sample Surface for up to `max` respondents. */
export function surfaceAsk(client: SessApi, max: number) {
  return client.createAsk({ surface: surface(), respondents: { max }, idempotencyKey: idemKey() });
}

/** A client for the runtime's first workspace. */
export function clientFor(sess: LocalSess, options: Partial<SessClientOptions> = {}): SessApi {
  return createSessClient({
    origin: sess.origin,
    credential: () => sess.apiKey,
    allowInsecureLocalhost: true,
    ...options,
  });
}

/** Await a promise that must reject with a `SessApiError` of `kind`; returns the error. */
export async function expectSessError(
  promise: Promise<unknown>,
  kind: SessApiErrorKind,
  details: Partial<
    Pick<
      SessApiError,
      | 'status'
      | 'apiCode'
      | 'field'
      | 'limit'
      | 'length'
      | 'reason'
      | 'notSentKind'
      | 'connectCause'
      | 'origin'
    >
  > = {},
): Promise<SessApiError> {
  let thrown: unknown;
  try {
    await promise;
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected a SessApiError of kind ${kind}`).toBeInstanceOf(SessApiError);
  const error = thrown as SessApiError;
  expect({ kind: error.kind, message: error.message }).toMatchObject({ kind });
  for (const [name, value] of Object.entries(details)) {
    expect(error[name as keyof SessApiError], name).toEqual(value);
  }
  recordedErrors.push(error);
  return error;
}

/** Every error {@link expectSessError} saw in this test file, for the secrets check. */
export const recordedErrors: SessApiError[] = [];

/** Create a Session, answer it through the page, and return the answered view. */
export async function answeredSession(
  sess: LocalSess,
  client: SessApi,
  options: { surface?: Surface; answer?: Answer } = {},
): Promise<{ created: SessionView; answered: SessionView; surface: Surface; answer: Answer }> {
  const s = options.surface ?? surface();
  const a = options.answer ?? answer();
  const created = await client.createSession({ surface: s, idempotencyKey: idemKey() });
  const page = await sess.submitAnswer(created.humanUrl, a);
  expect(page.status).toBe(303);
  const answered = await client.getSession(created.sessionId);
  expect(answered.status).toBe('answered');
  return { created, answered, surface: s, answer: a };
}

/**
 * The wire view of a Session of `sess` answered at revision 1, published again and answered at
 * revision 2 (two responses): the real view the decode tests change.
 */
export async function twiceAnsweredView(sess: LocalSess): Promise<WireSessionView> {
  const client = clientFor(sess);
  const { created, answered } = await answeredSession(sess, client);
  await client.publish(created.sessionId, { ...afterAnswer(answered), surface: surface('Next?') });
  await sess.submitAnswer(created.humanUrl, answer('second'));
  const view = sess.sessions.get(created.sessionId)!.view;
  expect(view).toMatchObject({ revision: 2, status: 'answered' });
  expect(view.responses).toHaveLength(2);
  return view;
}

/**
 * A named test double: a loopback HTTP server that answers every request with what `respond`
 * writes. Used only for responses the local runtime cannot be made to send.
 */
export async function startDoubleServer(
  respond: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ origin: string; close(): Promise<void>; requests: number }> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    state.requests += 1;
    req.resume();
    req.on('end', () => respond(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
