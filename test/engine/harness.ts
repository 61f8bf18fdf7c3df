/**
 * The engine under test, wired to real parts: the local Sess runtime (`startLocalSess`), the real
 * Sess client and the memory store, through a small test {@link Authority}. Doubles are named as
 * such and wrap a real part (`storeDouble`).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { ToolErrorObject } from '../../src/core/contract/errors.js';
import type {
  Authority,
  Binding,
  DiagnosticEvent,
  HandleStore,
  SessApi,
  StdioBinding,
  VersionedRecord,
} from '../../src/core/contract/ports.js';
import type { InteractionResult } from '../../src/core/contract/result.js';
import type { ToolName } from '../../src/core/contract/schemas.js';
import { createSessEngine, type SessEngine, type SessEngineOptions } from '../../src/core/engine/engine.js';
import type { ToolCallContext } from '../../src/core/engine/types.js';
import type { Surface } from '../../src/core/model/surface.js';
import { createSessClient, type SessClientOptions } from '../../src/sess/client.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createMemoryHandleStore, type HandleStoreFactory } from '../../src/store/memory/memory-store.js';
import { type LocalSess, type LocalSessOptions, startLocalSess } from '../../src/testing/index.js';
import { type Outcome, outcomeOf } from '../support/outcome.js';
import { approveAnswer, approveSurface, followUpSurface } from '../support/surfaces.js';

/** One tool call's outcome (`test/support/outcome.ts`). */
export type { Outcome };
/** The shared sample Surfaces and answer (`test/support/surfaces.ts`). */
export { approveAnswer, approveSurface, followUpSurface };

/** Per-test knobs. */
export interface HarnessOptions {
  sess?: LocalSessOptions;
  engine?: Omit<Partial<SessEngineOptions>, 'authority'>;
  /** Wrap the store view (a named double). */
  wrapStore?: (store: HandleStore) => HandleStore;
  /** Wrap the Sess client (a named double). */
  wrapSess?: (sess: SessApi) => SessApi;
  /** Where records live. @default a fresh memory store */
  stores?: HandleStoreFactory;
}

/** A running harness. */
export interface Harness {
  sess: LocalSess;
  client: SessApi;
  /** Where records live; replace it to simulate a restart over the same durable state. */
  stores: HandleStoreFactory;
  engine: SessEngine;
  /** The binding calls run with; change it to act as another profile, origin or key. */
  binding: StdioBinding;
  /** When set, calls run with this binding instead of {@link Harness.binding} (an HTTP principal, say). */
  actingAs: Binding | undefined;
  diagnostics: DiagnosticEvent[];
  call(tool: ToolName, args: unknown, ctx?: ToolCallContext): Promise<Outcome>;
  /** `call` that must succeed. */
  ok(tool: ToolName, args: unknown, ctx?: ToolCallContext): Promise<InteractionResult>;
  /** `call` that must fail; returns the error object. */
  fail(tool: ToolName, args: unknown, ctx?: ToolCallContext): Promise<ToolErrorObject>;
  /** The stored record of `handle` in the original binding's scope. */
  record(handle: string): Promise<VersionedRecord | undefined>;
  /** Another engine over the same authority (the same runtime, client and store), e.g. after a "restart". */
  makeEngine(options?: Omit<Partial<SessEngineOptions>, 'authority'>): SessEngine;
  /** The store view of the original binding. */
  store(): HandleStore;
  /** A fresh `sess_request` that is waiting, with its link. */
  request(
    surface?: Surface,
    extra?: Record<string, unknown>,
  ): Promise<InteractionResult & { humanUrl: string }>;
  /** request → the person answers; with the `sess_response` arguments that read it. */
  submitted(): Promise<Submitted>;
  /** request → answer → `answered`, with the arguments of the publish and complete that follow. */
  answered(): Promise<Answered>;
  close(): Promise<void>;
}

/** What {@link Harness.submitted} returns. */
export interface Submitted {
  created: InteractionResult & { humanUrl: string };
  /** `sess_response` arguments for the answer (revision 1, a 5 s wait). */
  response: { handle: string; revision: number; wait_ms: number };
}

/** What {@link Harness.answered} returns. */
export interface Answered {
  created: InteractionResult & { humanUrl: string };
  answered: InteractionResult;
  /** `sess_publish` arguments after that answer, with {@link followUpSurface}. */
  publish: { handle: string; expected_revision: number; response_event_id: string; interaction: Surface };
  /** `sess_complete` arguments after that answer. */
  complete: { handle: string; expected_revision: number; response_event_id: string };
}

/** A real Sess client of the local runtime (no key-refresh cooldown), with `extra` options. */
export function localClient(sess: LocalSess, extra: Partial<SessClientOptions> = {}): SessApi {
  return createSessClient({
    origin: sess.origin,
    credential: () => sess.apiKey,
    allowInsecureLocalhost: true,
    keyRefreshCooldownMs: 0,
    ...extra,
  });
}

/** A client method, bound to its client, as a forwarding double sees it. */
export type SessMethod = (...args: unknown[]) => Promise<unknown>;

/**
 * A `SessApi` double that sends every call to the client `current()` returns at that moment (so a
 * suite can swap clients between cases), through `around(name, real)` where that returns a wrapper.
 */
export function forwardingSess(
  current: () => SessApi,
  around: (name: keyof SessApi, real: SessMethod) => SessMethod | undefined = () => undefined,
): SessApi {
  return new Proxy({} as SessApi, {
    get: (_target, name: keyof SessApi) => {
      const client = current();
      const real = (client[name] as SessMethod).bind(client);
      return around(name, real) ?? real;
    },
  });
}

/**
 * Start a harness whose engine calls Sess through {@link forwardingSess} (room for many Sessions):
 * the suite's cases swap the client `current()` returns and observe or rewrite its calls.
 */
export function startForwardingHarness(
  current: () => SessApi,
  around?: (name: keyof SessApi, real: SessMethod) => SessMethod | undefined,
): Promise<Harness> {
  return startHarness({
    sess: { plan: { maxOpenSessions: 10_000 } },
    wrapSess: () => forwardingSess(current, around),
  });
}

/** Act as another stdio profile of the same runtime, through a fresh engine with `maxWaitMs`. */
export function switchProfile(
  h: Harness,
  profile: string,
  credentialGeneration: string,
  maxWaitMs: number,
): void {
  h.binding = { kind: 'stdio', profile, apiOrigin: h.sess.origin, credentialGeneration };
  h.engine = h.makeEngine({ maxWaitMs });
}

/** Start the runtime and build the engine over it. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const sess = await startLocalSess(options.sess);
  const realClient = localClient(sess);
  const client = options.wrapSess ? options.wrapSess(realClient) : realClient;
  const stores = options.stores ?? createMemoryHandleStore();
  const original: StdioBinding = {
    kind: 'stdio',
    profile: 'default',
    apiOrigin: sess.origin,
    credentialGeneration: 'gen-1',
  };
  const diagnostics: DiagnosticEvent[] = [];
  const harness: Harness = {
    sess,
    client,
    stores,
    binding: original,
    actingAs: undefined,
    diagnostics,
    engine: undefined as unknown as SessEngine,
    async call(tool, args, ctx) {
      return outcomeOf(await harness.engine.call(tool, args, ctx));
    },
    async ok(tool, args, ctx) {
      const out = await harness.call(tool, args, ctx);
      if (!out.ok) throw new Error(`${tool} failed: ${JSON.stringify(out.error)}`);
      return out.interaction;
    },
    async fail(tool, args, ctx) {
      const out = await harness.call(tool, args, ctx);
      if (out.ok) throw new Error(`${tool} succeeded: ${JSON.stringify(out.interaction)}`);
      return out.error;
    },
    record: (handle) => harness.stores.forBinding(original).get(handle),
    makeEngine: (extra = {}) =>
      createSessEngine({
        authority,
        diagnostics: (event) => diagnostics.push(event),
        ...options.engine,
        ...extra,
      }),
    store: () => harness.stores.forBinding(original),
    async request(surface = approveSurface, extra = {}) {
      const created = await harness.ok('sess_request', { interaction: surface, ...extra });
      if (created.humanUrl === undefined) throw new Error('no humanUrl');
      return created as InteractionResult & { humanUrl: string };
    },
    async submitted() {
      const created = await harness.request();
      await sess.submitAnswer(created.humanUrl, approveAnswer);
      return { created, response: { handle: created.handle, revision: 1, wait_ms: 5_000 } };
    },
    async answered() {
      const { created, response } = await harness.submitted();
      const answered = await harness.ok('sess_response', response);
      const complete = {
        handle: created.handle,
        expected_revision: 1,
        response_event_id: answered.response?.eventId as string,
      };
      return { created, answered, complete, publish: { ...complete, interaction: followUpSurface } };
    },
    close: () => sess.close(),
  };
  const authority: Authority = {
    async resolve() {
      const binding = harness.actingAs ?? harness.binding;
      const view = harness.stores.forBinding(binding);
      return {
        binding,
        sess: client,
        store: options.wrapStore ? options.wrapStore(view) : view,
      };
    },
  };
  harness.engine = createSessEngine({
    authority,
    diagnostics: (event) => diagnostics.push(event),
    ...options.engine,
  });
  return harness;
}

/** The Session id behind a link, read from the runtime (never through the API). */
export function sessionIdOf(sess: LocalSess, humanUrl: string): string {
  const snapshot = sess.sessions.byUrl(humanUrl);
  if (snapshot === undefined) throw new Error('no Session for that link');
  return snapshot.view.id;
}

/**
 * A store double: every method delegates to the real `store` unless `overrides` replaces it.
 * Tests name what each double does.
 */
export function storeDouble(store: HandleStore, overrides: Partial<HandleStore>): HandleStore {
  return {
    get: overrides.get ?? ((handle) => store.get(handle)),
    create: overrides.create ?? ((record) => store.create(record)),
    update: overrides.update ?? ((record, version) => store.update(record, version)),
    delete: overrides.delete ?? ((handle, version) => store.delete(handle, version)),
    listUnfinished: overrides.listUnfinished ?? (() => store.listUnfinished()),
    countUnfinished: overrides.countUnfinished ?? (() => store.countUnfinished()),
  };
}

/** The harnesses and file-store directories of one test file, closed and removed after each test. */
export interface HarnessLifecycle {
  /** {@link startHarness}, closed after the test. */
  start(options?: HarnessOptions): Promise<Harness>;
  /** A durable file store in a fresh directory (removed after the test), and how to reopen it. */
  fileStore(): Promise<{ stores: HandleStoreFactory; reopen: () => HandleStoreFactory }>;
}

/** Register the `afterEach` that closes every harness and removes every directory of a test. */
export function useHarnessLifecycle(): HarnessLifecycle {
  const open: Harness[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const harness of open.splice(0)) await harness.close();
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  return {
    async start(options) {
      const harness = await startHarness(options);
      open.push(harness);
      return harness;
    },
    async fileStore() {
      const stateDir = await mkdtemp(join(tmpdir(), 'sess-engine-'));
      dirs.push(stateDir);
      const reopen = () => createFileHandleStore({ stateDir });
      return { stores: reopen(), reopen };
    },
  };
}
