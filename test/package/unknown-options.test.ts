/**
 * Every factory the package exports refuses an option it does not know, so a misspelt or
 * unsupported option (`maxTotalWaits` where a factory has none) never passes silently.
 *
 * The factories are found in the built entries (every export of every `exports` entry of
 * package.json whose name starts with `create`, `serve`, `start`, `register` or `open`), and the
 * table below must cover each: a new factory fails this file until it is added. For each, a valid
 * call is accepted, and the same call with `bogus: 1` added to its bag is refused with the one
 * message of `readOptions`. A factory that takes no bag (a stream) must refuse `{ bogus: 1 }` in
 * that place. `npm test` builds first (`pretest`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { repoRoot } from '../support/repo-files.js';
import { useTempDirs } from '../support/temp-dirs.js';

const FACTORY_NAME = /^(create|serve|start|register|open)[A-Z]/;

type AnyFunction = (...args: unknown[]) => unknown;

/** Every export of every public entry, by name (one name has one meaning across entries). */
async function publicExports(): Promise<Map<string, { entry: string; value: unknown }>> {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { import?: { default?: string } }>;
  };
  const found = new Map<string, { entry: string; value: unknown }>();
  for (const [entry, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'string' ? undefined : target.import?.default;
    if (file === undefined || !file.endsWith('.js')) continue;
    if (!existsSync(join(repoRoot, file))) throw new Error(`${file} is missing: run npm run build`);
    const module = (await import(pathToFileURL(join(repoRoot, file)).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) found.set(name, { entry, value });
  }
  return found;
}

const tempDir = useTempDirs('sess-mcp-unknown-options-');

/** One valid call of a factory: its arguments, the place of its bag, and how to undo it. */
interface Call {
  args: unknown[];
  /** The argument index of the option bag. */
  bag: number;
  /** Stop what the call started (a server, a listener). */
  undo?: (made: unknown) => Promise<void> | void;
}

/** An engine of the built root entry, for the factories that take one. */
async function anEngine(): Promise<unknown> {
  const { createSessEngine } = (await entry('.')) as { createSessEngine: AnyFunction };
  return createSessEngine({ authority: { resolve: async () => ({}) } });
}

/** How each factory is called validly. A factory missing here fails the coverage test. */
const VALID: Record<string, () => Promise<Call> | Call> = {
  // '.'
  createSessEngine: () => ({ args: [{ authority: { resolve: async () => ({}) } }], bag: 0 }),
  createWaitGate: () => ({ args: [{ maxConcurrentWaits: 2 }], bag: 0 }),
  registerSessTools: async () => ({ args: [{ registerTool() {} }, { engine: await anEngine() }], bag: 1 }),
  createSessToolHandlers: async () => ({ args: [{ engine: await anEngine() }], bag: 0 }),
  createMemoryHandleStore: () => ({ args: [{}], bag: 0 }),
  createEventDelivery: () => ({
    args: [
      {
        outbox: createMemoryHandleStore().outbox!(),
        sinks: [],
        retryDelay: () => 1_000,
        spanMs: 86_400_000,
      },
    ],
    bag: 0,
  }),
  // './http'
  createSessMcpHttpHandler: () => ({
    args: [{ authenticate: () => undefined, handleStore: () => ({}), allowedHosts: ['mcp.example.com'] }],
    bag: 0,
    undo: (handler) => (handler as { close(): Promise<void> }).close(),
  }),
  createSessMcpWatcher: () => ({
    args: [{ handleStores: { forBinding() {}, waiting() {} }, credentialFor: () => undefined }],
    bag: 0,
  }),
  // './sess'
  createSessClient: () => ({ args: [{ origin: 'https://api.sess.si', credential: () => 'sk' }], bag: 0 }),
  createSessClientFactory: () => ({ args: [{ origin: 'https://api.sess.si' }], bag: 0 }),
  createReceiptVerifier: () => ({ args: [{ origin: 'https://api.sess.si' }], bag: 0 }),
  // './stdio'
  serveSessMcpStdio: () => ({
    args: [{ env: {}, stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }],
    bag: 0,
    undo: (server) => (server as { close(): Promise<void> }).close(),
  }),
  createStdioAuthority: () => ({ args: [{ env: {}, config: {}, store: () => ({}) }], bag: 0 }),
  createStderrDiagnostics: () => ({ args: [new PassThrough()], bag: 0 }),
  // './store/file'
  createFileHandleStore: async () => ({ args: [{ stateDir: await tempDir() }], bag: 0 }),
  openProfileRecords: async () => ({ args: [{ stateDir: await tempDir() }], bag: 0 }),
  // './store/postgres'
  createPostgresHandleStore: () => ({ args: [{ pool: { query() {}, connect() {} } }], bag: 0 }),
  // './testing'
  createLocalClock: () => ({ args: [{ frozen: true }], bag: 0 }),
  startLocalSess: () => ({
    args: [{ workspaceHeader: true }],
    bag: 0,
    undo: (sess) => (sess as { close(): Promise<void> }).close(),
  }),
};

/** Factories whose place of a bag takes something else: `{ bogus: 1 }` there must be refused. */
const NOT_A_BAG: Record<string, string> = {
  createStderrDiagnostics: 'createStderrDiagnostics: stream must have a write() method.',
};

let exportsCache: Map<string, { entry: string; value: unknown }> | undefined;
async function exportsOnce() {
  exportsCache ??= await publicExports();
  return exportsCache;
}
async function entry(name: string): Promise<Record<string, unknown>> {
  const all = await exportsOnce();
  return Object.fromEntries([...all].filter(([, v]) => v.entry === name).map(([k, v]) => [k, v.value]));
}

/** Call `name`; a rejected promise or a throw comes back as the error. */
async function attempt(name: string, args: unknown[]): Promise<{ made?: unknown; error?: unknown }> {
  const fn = (await exportsOnce()).get(name)?.value as AnyFunction;
  try {
    return { made: await fn(...args) };
  } catch (error) {
    return { error };
  }
}

describe('every public factory refuses an option it does not know', () => {
  it('the table covers every factory of the built entries, and nothing else', async () => {
    const factories = [...(await exportsOnce())]
      .filter(([name, { value }]) => FACTORY_NAME.test(name) && typeof value === 'function')
      .map(([name]) => name)
      .sort();
    // The entries really were read: the best known factories are among them.
    expect(factories).toEqual(expect.arrayContaining(['createSessMcpHttpHandler', 'createWaitGate']));
    expect(factories).toEqual(Object.keys(VALID).sort());
  });

  it.each(Object.keys(VALID))('%s', async (name) => {
    const valid = await VALID[name]!();
    const accepted = await attempt(name, valid.args);
    expect(accepted.error, 'the valid call must be accepted').toBeUndefined();
    await valid.undo?.(accepted.made);

    const again = await VALID[name]!();
    const args = [...again.args];
    const expected = NOT_A_BAG[name];
    args[again.bag] = expected === undefined ? { ...(args[again.bag] as object), bogus: 1 } : { bogus: 1 };
    const refused = await attempt(name, args);
    if (refused.error === undefined) await again.undo?.(refused.made);
    expect(refused.error).toBeInstanceOf(TypeError);
    expect((refused.error as Error).message).toBe(
      expected ?? `${name}: option "bogus" is not an option of ${name}.`,
    );
  });
});
