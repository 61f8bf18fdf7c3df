/**
 * The rules several entries share (`src/core/contract/rules.ts`), each checked with ONE corpus of valid and
 * invalid values fed through every entry that accepts it: the engine, the HTTP handler, the stdio
 * environment, the Sess client and the file store must give the same verdict on the same value, and
 * every refusal must name its option or variable and state the rule's own text.
 *
 * The drifts 0.1.0 shipped, and those found after it, are named cases, so a regression names the
 * drift it brings back.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSessMcpError } from '../../src/core/contract/errors.js';
import { ARGUMENT_LIMITS } from '../../src/core/contract/limits.js';
import { SessApiError } from '../../src/core/contract/ports.js';
import {
  HANDLE_PREFIX,
  MAX_RANDOM_ID_LENGTH,
  PROFILE_NAME_RULE,
  RANDOM_ID_RULE,
  RECEIPT_ISSUER_RULE,
  SESS_ID_RULE,
  WAIT_CEILING_MS,
  WAIT_MS_RULE,
} from '../../src/core/contract/rules.js';
import { createSessEngine } from '../../src/core/engine/engine.js';
import { defaultRandomId } from '../../src/core/engine/identity.js';
import { createSessMcpHttpHandler } from '../../src/http/index.js';
import { principalProblem } from '../../src/http/preflight/auth.js';
import { createReceiptVerifier, createSessClient, createSessClientFactory } from '../../src/sess/index.js';
import { readStdioConfig } from '../../src/stdio/config.js';
import { createFileHandleStore, openProfileRecords } from '../../src/store/file/index.js';
import { approveSurface, type Harness, startHarness } from '../engine/harness.js';
import { MINIMAL_HTTP_OPTIONS } from '../http/helpers.js';
import { makeRecord } from '../store/fixtures.js';

/** A verdict: accepted, or refused with the message (whose form each entry checks itself). */
type Verdict = { ok: true } | { ok: false; message: string };

const accepted: Verdict = { ok: true };

function typeErrorVerdict(build: () => unknown): Verdict {
  try {
    build();
    return accepted;
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return { ok: false, message: (error as Error).message };
  }
}

const linux = { platform: 'linux', homedir: () => '/home/fallback' };

function stdioVerdict(env: Record<string, string>): Verdict {
  try {
    readStdioConfig({ HOME: '/home/me', ...env }, linux);
    return accepted;
  } catch (error) {
    if (!isSessMcpError(error)) throw error;
    expect(error.code).toBe('NOT_CONFIGURED');
    return { ok: false, message: error.message };
  }
}

const authority = {
  resolve: () => {
    throw new Error('not used: no tool is called');
  },
};

const httpBase = MINIMAL_HTTP_OPTIONS;

const clientBase = { origin: 'https://api.sess.si', credential: () => 'sk_test_not_sent' };

const principalBase = {
  principalId: 'alice',
  clientId: 'client_1',
  grantId: 'grant_1',
  grantGeneration: '1',
  scopes: ['sess'],
  credential: () => 'sk_test_not_sent',
};

/** One entry of a rule: how it is fed a value, and what its refusal must name. */
interface Entry<V> {
  name: string;
  /** The option or variable the message names. */
  names: string;
  verdict(value: V): Verdict | Promise<Verdict>;
  /** False for a value this entry cannot carry (an environment variable cannot carry ''). */
  carries?(value: V): boolean;
}

/**
 * A stdio variable as an entry. An environment cannot carry '': hosts expand a missing variable to
 * "", so an empty variable means "not set" (its own cases below).
 */
function envEntry(variable: string): Entry<string> {
  return {
    name: `stdio ${variable}`,
    names: variable,
    verdict: (value) => stdioVerdict({ [variable]: value }),
    carries: (value) => value !== '',
  };
}

/** Feed every value through every entry and require one verdict per value, with a good message. */
function expectSameVerdicts<V>(
  rule: { text: string },
  entries: Entry<V>[],
  valid: readonly V[],
  invalid: readonly V[],
): void {
  const rows = entries.flatMap((entry) =>
    [
      ...valid.map((value) => [entry.name, value, true, entry] as const),
      ...invalid.map((value) => [entry.name, value, false, entry] as const),
    ].filter(([, value]) => entry.carries?.(value) ?? true),
  );
  it.each(rows)('%s: %j → valid %s', async (_name, value, valid, entry) => {
    const verdict = await entry.verdict(value);
    expect(verdict.ok).toBe(valid);
    if (!verdict.ok) {
      expect(verdict.message).toContain(entry.names);
      expect(verdict.message).toContain(rule.text);
    }
  });
}

describe('the wait bound (WAIT_MS_RULE)', () => {
  const valid = [0, 1, WAIT_CEILING_MS];
  const invalid = [WAIT_CEILING_MS + 1, -1, 1.5, Number.NaN];
  const entries: Entry<number>[] = [
    {
      name: 'createSessEngine maxWaitMs',
      names: 'createSessEngine: option "maxWaitMs"',
      verdict: (ms) => typeErrorVerdict(() => createSessEngine({ authority, maxWaitMs: ms })),
    },
    {
      name: 'createSessMcpHttpHandler maxWaitMs',
      names: 'createSessMcpHttpHandler: option "maxWaitMs"',
      verdict: (ms) => typeErrorVerdict(() => createSessMcpHttpHandler({ ...httpBase, maxWaitMs: ms })),
    },
    {
      name: 'stdio SESS_MCP_MAX_WAIT_MS',
      names: 'SESS_MCP_MAX_WAIT_MS',
      verdict: (ms) => stdioVerdict({ SESS_MCP_MAX_WAIT_MS: String(ms) }),
    },
    {
      // The client checks the wait before it sends anything; an aborted signal ends a valid call
      // before the network, so "not refused" shows as `aborted`, a refusal as `not_sent`.
      name: 'Sess client waitSession timeoutMs',
      names: 'the wait',
      verdict: async (ms) => {
        const client = createSessClient(clientBase);
        const error = await client
          .waitSession(
            'ses_1',
            { revision: 1, status: 'active', timeoutMs: ms },
            { signal: AbortSignal.abort() },
          )
          .then(
            () => undefined,
            (caught: unknown) => caught,
          );
        expect(error).toBeInstanceOf(SessApiError);
        const kind = (error as SessApiError).kind;
        expect(['aborted', 'not_sent']).toContain(kind);
        return kind === 'aborted' ? accepted : { ok: false, message: (error as Error).message };
      },
    },
  ];
  expectSameVerdicts(WAIT_MS_RULE, entries, valid, invalid);

  it('0.1.0 drift: HTTP refused maxWaitMs 0 that the engine and stdio allow', () => {
    expect(typeErrorVerdict(() => createSessMcpHttpHandler({ ...httpBase, maxWaitMs: 0 }))).toEqual(accepted);
    expect(typeErrorVerdict(() => createSessEngine({ authority, maxWaitMs: 0 }))).toEqual(accepted);
    expect(stdioVerdict({ SESS_MCP_MAX_WAIT_MS: '0' })).toEqual(accepted);
    expect(readStdioConfig({ HOME: '/h', SESS_MCP_MAX_WAIT_MS: '0' }, linux).maxWaitMs).toBe(0);
  });

  it('the stdio variable takes digits only: forms Number() would read are refused', () => {
    for (const text of ['1e3', ' 12', '0x10', '+5', '100000']) {
      expect(stdioVerdict({ SESS_MCP_MAX_WAIT_MS: text }).ok, text).toBe(false);
    }
  });
});

describe('the workspace id (SESS_ID_RULE)', () => {
  const valid = ['ws_1', 'ws.1:a-b', 'a'.repeat(128)];
  const invalid = ['ws!1', '', 'a'.repeat(129), 'wś'];
  const entries: Entry<string>[] = [
    envEntry('SESS_EXPECTED_WORKSPACE_ID'),
    {
      name: 'createSessMcpHttpHandler expectedWorkspaceId',
      names: 'createSessMcpHttpHandler: option "expectedWorkspaceId"',
      verdict: (id) =>
        typeErrorVerdict(() => createSessMcpHttpHandler({ ...httpBase, expectedWorkspaceId: id })),
    },
    {
      name: 'createSessClient expectedWorkspaceId',
      names: 'createSessClient: option "expectedWorkspaceId"',
      verdict: (id) => typeErrorVerdict(() => createSessClient({ ...clientBase, expectedWorkspaceId: id })),
    },
    {
      name: 'createSessClient credentialWorkspaceId',
      names: 'createSessClient: option "credentialWorkspaceId"',
      verdict: (id) => typeErrorVerdict(() => createSessClient({ ...clientBase, credentialWorkspaceId: id })),
    },
    {
      name: "a createSessClientFactory client's credentialWorkspaceId",
      names: 'createSessClientFactory: option "credentialWorkspaceId"',
      verdict: (id) =>
        typeErrorVerdict(() =>
          createSessClientFactory({ origin: clientBase.origin })(clientBase.credential, {
            credentialWorkspaceId: id,
          }),
        ),
    },
    {
      // The HTTP principal's workspace, checked against the key's: refused as http.principal_invalid.
      name: 'the HTTP principal workspaceId',
      names: 'workspaceId',
      verdict: (id) => {
        const problem = principalProblem({ ...principalBase, workspaceId: id });
        return problem === undefined
          ? accepted
          : { ok: false, message: `${problem.field}: ${problem.expected}` };
      },
    },
  ];
  expectSameVerdicts(SESS_ID_RULE, entries, valid, invalid);

  it("0.1.0 drift: 'ws!1' passed stdio but not the client; now both refuse it", () => {
    expect(stdioVerdict({ SESS_EXPECTED_WORKSPACE_ID: 'ws!1' }).ok).toBe(false);
    expect(typeErrorVerdict(() => createSessClient({ ...clientBase, expectedWorkspaceId: 'ws!1' })).ok).toBe(
      false,
    );
  });

  it("0.1.0 drift: the message said 'A–Z a–z 0–9 _ -' while '.' and ':' were allowed", () => {
    expect(SESS_ID_RULE.text).toContain('.');
    expect(SESS_ID_RULE.text).toContain(':');
    const messages = [
      stdioVerdict({ SESS_EXPECTED_WORKSPACE_ID: 'ws!1' }),
      typeErrorVerdict(() => createSessMcpHttpHandler({ ...httpBase, expectedWorkspaceId: 'ws!1' })),
      typeErrorVerdict(() => createSessClient({ ...clientBase, expectedWorkspaceId: 'ws!1' })),
    ];
    for (const verdict of messages) {
      expect(verdict.ok).toBe(false);
      if (!verdict.ok) {
        expect(verdict.message).toContain('A-Z a-z 0-9 . _ : -');
        expect(verdict.message).not.toContain('ws!1');
      }
    }
    // And both characters the old message left out are really accepted, everywhere.
    expect(stdioVerdict({ SESS_EXPECTED_WORKSPACE_ID: 'ws.1:a' })).toEqual(accepted);
    expect(
      typeErrorVerdict(() => createSessClient({ ...clientBase, expectedWorkspaceId: 'ws.1:a' })),
    ).toEqual(accepted);
  });

  it("an empty SESS_EXPECTED_WORKSPACE_ID means not set: no workspace is trusted, '' least of all", () => {
    // Hosts expand a missing variable to "", so the environment cannot carry '' as a value.
    const config = readStdioConfig({ HOME: '/h', SESS_EXPECTED_WORKSPACE_ID: '' }, linux);
    expect(config).not.toHaveProperty('expectedWorkspaceId');
  });
});

describe('the profile name (PROFILE_NAME_RULE)', () => {
  let stateDir: string;
  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'sess-rules-'));
  });
  afterAll(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  const valid = ['default', '_x', 'a'.repeat(64), 'a.b-c'];
  const invalid = ['.x', '-x', 'a'.repeat(65), 'a/b', ''];
  const entries: Entry<string>[] = [
    envEntry('SESS_MCP_PROFILE'),
    {
      name: 'createFileHandleStore profile',
      names: 'createFileHandleStore: option "profile"',
      verdict: (profile) => typeErrorVerdict(() => createFileHandleStore({ stateDir, profile })),
    },
    {
      name: 'openProfileRecords profile',
      names: 'openProfileRecords: option "profile"',
      verdict: (profile) => typeErrorVerdict(() => openProfileRecords({ stateDir, profile })),
    },
  ];
  expectSameVerdicts(PROFILE_NAME_RULE, entries, valid, invalid);

  it("an empty SESS_MCP_PROFILE means not set: the default profile, never a profile ''", () => {
    expect(readStdioConfig({ HOME: '/h', SESS_MCP_PROFILE: '' }, linux).profile).toBe('default');
  });

  it("0.1.0 drift: profile '_x' was refused by stdio but valid for the file store", () => {
    expect(stdioVerdict({ SESS_MCP_PROFILE: '_x' })).toEqual(accepted);
    expect(typeErrorVerdict(() => createFileHandleStore({ stateDir, profile: '_x' }))).toEqual(accepted);
    expect(typeErrorVerdict(() => openProfileRecords({ stateDir, profile: '_x' }))).toEqual(accepted);
  });

  it.each(['default', '_x', 'a.b-c'])(
    'state-dir layout: profileDir of %s is where the file store writes',
    async (profile) => {
      const config = readStdioConfig(
        { HOME: '/h', SESS_MCP_STATE_DIR: stateDir, SESS_MCP_PROFILE: profile },
        linux,
      );
      const stores = createFileHandleStore({ stateDir: config.stateDir, profile: config.profile });
      const records = openProfileRecords({ stateDir: config.stateDir, profile: config.profile });
      expect(stores.directory).toBe(join(config.profileDir, 'handles'));
      expect(records.directory).toBe(stores.directory);

      const binding = {
        kind: 'stdio',
        profile,
        apiOrigin: 'http://127.0.0.1:4010',
        credentialGeneration: 'gen-1',
      } as const;
      const record = makeRecord(binding);
      await stores.forBinding(binding).create(record);
      const written = await readdir(join(config.profileDir, 'handles'));
      expect(written.some((name) => name.startsWith(record.handle))).toBe(true);
      expect((await records.list()).map((r) => r.handle)).toContain(record.handle);
    },
  );
});

describe('the receipt issuer (RECEIPT_ISSUER_RULE)', () => {
  const valid = ['https://receipts.sess.example', 'x', '!~', 'a'.repeat(2048)];
  const invalid = ['has space', 'tab\there', 'ré', 'a'.repeat(2049), ''];
  const entries: Entry<string>[] = [
    envEntry('SESS_RECEIPT_ISSUER'),
    {
      name: 'createSessMcpHttpHandler receiptIssuer',
      names: 'createSessMcpHttpHandler: option "receiptIssuer"',
      verdict: (issuer) =>
        typeErrorVerdict(() => createSessMcpHttpHandler({ ...httpBase, receiptIssuer: issuer })),
    },
    {
      name: 'createSessClient receiptIssuer',
      names: 'createSessClient: option "receiptIssuer"',
      verdict: (issuer) => typeErrorVerdict(() => createSessClient({ ...clientBase, receiptIssuer: issuer })),
    },
    {
      name: 'createReceiptVerifier issuer',
      names: 'createReceiptVerifier: option "issuer"',
      verdict: (issuer) =>
        typeErrorVerdict(() => createReceiptVerifier({ origin: clientBase.origin, issuer })),
    },
  ];
  expectSameVerdicts(RECEIPT_ISSUER_RULE, entries, valid, invalid);

  it('drift: stdio refused an issuer with a space that the HTTP option, the client and the verifier accepted', () => {
    const spaced = 'https://receipts.example/ a';
    expect(stdioVerdict({ SESS_RECEIPT_ISSUER: spaced }).ok).toBe(false);
    expect(typeErrorVerdict(() => createSessMcpHttpHandler({ ...httpBase, receiptIssuer: spaced })).ok).toBe(
      false,
    );
    expect(typeErrorVerdict(() => createSessClient({ ...clientBase, receiptIssuer: spaced })).ok).toBe(false);
    expect(
      typeErrorVerdict(() => createReceiptVerifier({ origin: clientBase.origin, issuer: spaced })).ok,
    ).toBe(false);
  });
});

describe('the random id of a handle (RANDOM_ID_RULE)', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ sess: { plan: { maxOpenSessions: 1_000 } } });
  });
  afterAll(async () => {
    await harness.close();
  });

  /**
   * An id source whose construction sample is a good id and whose next id, the handle's, is
   * `value` (the idempotency key after it is a good id again): what a generator that only sometimes
   * returns a bad id looks like to the engine.
   */
  function handleIdThen(value: string): () => string {
    let calls = 0;
    return () => {
      calls += 1;
      return calls === 2 ? value : defaultRandomId();
    };
  }

  /**
   * Make a handle with `randomId` through `sess_request`, then read it with `sess_response`: the
   * handle is accepted only when the tools that take it accept it too.
   */
  async function handleVerdict(randomId: () => string): Promise<Verdict> {
    const engine = harness.makeEngine({ randomId });
    const created = await engine.request({ interaction: approveSurface }).then(
      (result) => result,
      (error: unknown) => error,
    );
    if (isSessMcpError(created)) {
      expect(created.code).toBe('NOT_CONFIGURED');
      return { ok: false, message: created.message };
    }
    const { handle } = created as { handle: string };
    expect(handle.startsWith(HANDLE_PREFIX)).toBe(true);
    const read = await engine.call('sess_response', { handle, revision: 1, wait_ms: 0 });
    expect(read.isError ?? false, JSON.stringify(read.structuredContent)).toBe(false);
    return accepted;
  }

  // Each value once per entry: the handles of one suite must not collide.
  const valid = ['A'.repeat(22), 'b'.repeat(MAX_RANDOM_ID_LENGTH), 'Zz09-_Zz09-_Zz09-_Zz09-_'];
  const invalid = [
    'c'.repeat(MAX_RANDOM_ID_LENGTH + 1),
    'd'.repeat(ARGUMENT_LIMITS.maxIdLength),
    'e'.repeat(21),
    'has spaces and is long enough',
    'plus+slash/and=padding==',
  ];
  const entries: Entry<string>[] = [
    {
      name: 'createSessEngine randomId',
      names: 'createSessEngine: option "randomId"',
      verdict: (id) => typeErrorVerdict(() => createSessEngine({ authority, randomId: () => id })),
    },
    {
      name: 'the handle sess_request makes',
      names: 'randomId',
      verdict: (id) => handleVerdict(handleIdThen(id)),
    },
  ];
  expectSameVerdicts(RANDOM_ID_RULE, entries, valid, invalid);

  it('the longest id makes the longest handle the tools take', () => {
    expect(HANDLE_PREFIX.length + MAX_RANDOM_ID_LENGTH).toBe(ARGUMENT_LIMITS.maxIdLength);
    expect(defaultRandomId()).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(RANDOM_ID_RULE.test(defaultRandomId())).toBe(true);
  });

  it('drift: the engine took a 128-character randomId whose 135-character handles its own sess_response refused', async () => {
    const id = 'f'.repeat(128);
    expect(typeErrorVerdict(() => createSessEngine({ authority, randomId: () => id })).ok).toBe(false);
    const made = await handleVerdict(handleIdThen(id));
    expect(made.ok).toBe(false);
    if (!made.ok) expect(made.message).not.toContain(id);
    // Nothing was saved for the refused handle: the list holds only the handles the tools take.
    const listed = await harness.engine.list({ limit: 100 });
    expect(listed.items.length).toBeGreaterThan(0);
    for (const item of listed.items) expect(item.handle.length).toBeLessThanOrEqual(128);
  });
});
