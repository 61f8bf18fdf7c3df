/**
 * The stdio stack's lifecycle for test files: a local Sess runtime, a fresh state directory, the
 * server's environment (nothing inherited from the test process) and a connected `sess-mcp` child,
 * started by a test and torn down after it (or once per file), with every server's stderr in the
 * test's secrets audit — the `useSecretsAudit()` of the stdio suite.
 *
 * A test file states only what is particular to it: which client, which variables, which runtime
 * options. The child-process harness itself (building the bin, connecting the clients) is
 * `test/stdio/harness.ts`.
 *
 * @example
 * ```ts
 * const stdio = useStdioStack();
 * it('creates one Session', async () => {
 *   const stack = await stdio.start({ client: 'v2', env: { SESS_MCP_MAX_WAIT_MS: '300' } });
 *   await stack.server.callTool('sess_request', { interaction });
 *   stdio.audit.url(humanUrl, 'sess link');
 * });
 * ```
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type LocalSess, type LocalSessOptions, startLocalSess } from '../../src/testing/index.js';
import { cleanBuilds, connectStdio, type StdioSession, serverEnv, tempStateDir } from '../stdio/harness.js';
import { createSecretsAudit, type SecretsAudit, useSecretsAudit } from './audit.js';

/** A local Sess runtime, a state directory and a connected `sess-mcp` child, torn down together. */
export interface StdioStack {
  readonly sess: LocalSess;
  readonly stateDir: string;
  /** The server's environment (change it before `restart` to rotate a key, …). */
  env: Record<string, string>;
  /** The current server. */
  server: StdioSession;
  /** Kill the server with SIGKILL and start a fresh one on the same state directory. */
  restart(options?: { kill?: boolean }): Promise<StdioSession>;
  /** Close the server, the runtime and remove the state directory. */
  close(): Promise<void>;
}

/** Options of {@link startStack}. */
export interface StackOptions {
  client?: 'v1' | 'v2' | 'v2-modern';
  audit: SecretsAudit;
  /** Extra or overriding server variables (`undefined` removes one). */
  env?: Record<string, string | undefined>;
  /** Runtime options. */
  sess?: LocalSessOptions;
  /** Do not connect a server yet. */
  noServer?: boolean;
}

/** Start the runtime and a server bound to it; registers the API key with the audit. */
export async function startStack(options: StackOptions): Promise<StdioStack> {
  const sess = await startLocalSess(options.sess);
  const state = await tempStateDir();
  options.audit.secret(sess.apiKey, 'api key');
  const env = serverEnv({
    SESS_API_KEY: sess.apiKey,
    SESS_API_ORIGIN: sess.origin,
    SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
    SESS_MCP_STATE_DIR: state.dir,
    ...options.env,
  });
  const servers: StdioSession[] = [];
  const connect = async () => {
    const server = await connectStdio({
      client: options.client ?? 'v1',
      env: stack.env,
      audit: options.audit,
    });
    servers.push(server);
    stack.server = server;
    return server;
  };
  const stack: StdioStack = {
    sess,
    stateDir: state.dir,
    env,
    server: undefined as unknown as StdioSession,
    async restart({ kill = true } = {}) {
      if (stack.server !== undefined) await (kill ? stack.server.kill() : stack.server.close());
      return connect();
    },
    async close() {
      await Promise.all(servers.map((s) => s.kill()));
      await sess.close();
      await state.remove();
    },
  };
  if (options.noServer !== true) await connect();
  return stack;
}

/** Options of a stack a fixture starts: {@link StackOptions} without the audit (the fixture's). */
export type StdioStackStart = Omit<StackOptions, 'audit'>;

/** A test file's stdio stacks, one audit per test. */
export interface StdioStackFixture {
  /** The current test's secrets audit (register links and answers here). */
  readonly audit: SecretsAudit;
  /** Start a stack for the current test; it is closed after the test, before the audit check. */
  start(options?: StdioStackStart): Promise<StdioStack>;
}

/**
 * Per test: every stack a test starts is closed after it, then its audit must be clean; the bins
 * built for the file are removed after the file.
 */
export function useStdioStack(): StdioStackFixture {
  // Registered first, so it runs last: the stacks are closed (stderr complete) when it checks.
  const audits = useSecretsAudit();
  const started: StdioStack[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((stack) => stack.close()));
  });
  afterAll(cleanBuilds);
  return {
    get audit() {
      return audits.current;
    },
    async start(options = {}) {
      const stack = await startStack({ ...options, audit: audits.current });
      started.push(stack);
      return stack;
    },
  };
}

/** One stack for a whole test file, with one audit. */
export interface SharedStdioStack {
  /** The file's audit, checked after the file. */
  readonly audit: SecretsAudit;
  /** The stack (started before the file's first test). */
  readonly stack: StdioStack;
}

/** Per file: one stack started before the first test, closed after the last, then audited. */
export function useSharedStdioStack(options: StdioStackStart = {}): SharedStdioStack {
  const audit = createSecretsAudit();
  let stack: StdioStack | undefined;
  beforeAll(async () => {
    stack = await startStack({ ...options, audit });
  });
  afterAll(async () => {
    await stack?.close();
    await cleanBuilds();
    audit.assertClean();
  });
  return {
    audit,
    get stack() {
      if (stack === undefined) throw new Error('the shared stdio stack starts in beforeAll');
      return stack;
    },
  };
}
