/**
 * Two HTTP handler instances sharing one PostgreSQL database, as behind a load balancer: each
 * instance of `examples/postgres-http.ts` runs in its own OS process (bundled with esbuild) with
 * its own `pg` pool, real MCP clients call them over HTTP, and the local Sess runtime answers.
 *
 * - A whole interaction whose every tool call goes to the other instance than the one before
 *   completes with exactly one Session.
 * - 150 concurrent `sess_request` calls across both instances for one binding leave exactly 100
 *   unfinished handles (and 100 Sessions) and 50 `STATE_STORE_FULL` refusals.
 * - With a per-principal quota of 50, 100 concurrent `sess_request` calls of one principal across
 *   both instances leave exactly 50 open (and 50 Sessions) and 50 `PRINCIPAL_QUOTA_REACHED`.
 * - The example's in-process pair (`startPostgresHttpExample`) serves one interaction across both.
 *
 * Without `DATABASE_URL` the suite is skipped and says why; under CI (`CI` set) that is a failure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresHttpExample } from '../../examples/postgres-http.js';
import { MAX_UNFINISHED } from '../../src/core/contract/ports.js';
import { httpBindingOf } from '../../src/http/index.js';
import { escapeToAscii } from '../../src/store/postgres/encoding.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import {
  approveAnswer,
  approveSurface,
  call,
  followUpSurface,
  ok,
  readApproved,
  type ToolCaller,
} from '../http/harness.js';
import { connectLegacy, connectModern } from '../http/helpers.js';
import { useSecretsAudit } from '../support/audit.js';
import { bundleWithPackages } from '../support/bundle.js';
import { useCleanup } from '../support/cleanup.js';

const url = process.env.DATABASE_URL;
const SKIP_REASON = 'DATABASE_URL is unset; run: eval "$(bash scripts/ci-postgres.sh)"';
const BEARER = 'two-instances-bearer-token-0123456789';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..', '..');

/** One instance in its own process. */
interface ChildInstance {
  url: string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

if (url === undefined || url === '') {
  if (process.env.CI) {
    describe('two handler instances on PostgreSQL', () => {
      it('has a database in CI', () => {
        throw new Error(`CI must not skip the two-instance suite: ${SKIP_REASON}`);
      });
    });
  } else {
    process.stderr.write(`Two-instance PostgreSQL suite skipped: ${SKIP_REASON}\n`);
    describe.skip(`two handler instances on PostgreSQL (skipped: ${SKIP_REASON})`, () => {
      it('needs DATABASE_URL', () => {});
    });
  }
} else {
  const audits = useSecretsAudit();
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  const tables: string[] = [];
  const open = useCleanup();
  let bundle = '';

  /** A table of its own for each test, dropped at the end. */
  const freshTable = (): string => {
    const name = `two_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    tables.push(name);
    return name;
  };

  beforeAll(async () => {
    // Inside node_modules so the bundle's external packages (pg, the MCP SDK) resolve.
    bundle = await bundleWithPackages(
      join(here, 'two-instances-worker.ts'),
      'sess-mcp-store-test',
      `two-instances-${process.pid}.mjs`,
      // The example runs itself when its module is the entry point; inside the bundle it is not.
      { define: { 'import.meta.url': JSON.stringify('sess-mcp:two-instances-worker') } },
    );
  });

  afterAll(async () => {
    await rm(bundle, { force: true });
    for (const table of tables)
      await admin.query(`DROP TABLE IF EXISTS "public"."${table}", "public"."${table}_keys"`);
    await admin.end();
  });

  async function runtime(): Promise<LocalSess> {
    const sess = await startLocalSess();
    open.push(sess);
    audits.current.secret(sess.apiKey, 'sess api key');
    audits.current.secret(BEARER, 'mcp bearer token');
    return sess;
  }

  /** Start one instance of the example in a process of its own; options go in on stdin. */
  async function spawnInstance(options: Record<string, unknown>): Promise<ChildInstance> {
    const child: ChildProcess = spawn(process.execPath, [bundle], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    audits.current.watch(() => stderr, `instance ${child.pid} stderr`);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const instance: ChildInstance = {
      url: '',
      stderr: () => stderr,
      async close() {
        if (child.exitCode === null && child.signalCode === null) {
          child.stdin!.end();
          const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(timer);
        }
      },
    };
    open.push(instance);
    instance.url = await new Promise<string>((resolve, reject) => {
      let buffer = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('utf8');
        const eol = buffer.indexOf('\n');
        if (eol >= 0) resolve((JSON.parse(buffer.slice(0, eol)) as { url: string }).url);
      });
      void exited.then(() => reject(new Error(`instance exited early: ${stderr.slice(0, 300)}`)));
      child.stdin!.write(`${JSON.stringify(options)}\n`);
    });
    return instance;
  }

  /** The options of one example instance on `table`, talking to `sess`. */
  const exampleOptions = (sess: LocalSess, table: string) => ({
    connectionString: url,
    table,
    sessApiKey: sess.apiKey,
    bearerToken: BEARER,
    sessOrigin: sess.origin,
    allowInsecureLocalhost: true,
    workspaceId: sess.workspaceId,
  });

  /** Two instances, two processes, one table: A migrates it, B does not. */
  async function startPair(
    sess: LocalSess,
    table: string,
    extra: Record<string, unknown> = {},
  ): Promise<[ChildInstance, ChildInstance]> {
    const shared = { ...exampleOptions(sess, table), ...extra };
    // Started together: B touches the table only on its first tool call, after A has migrated.
    const [a, b] = await Promise.all([
      spawnInstance({ ...shared, migrate: true }),
      spawnInstance({ ...shared, migrate: false }),
    ]);
    expect(a.url).not.toBe(b.url);
    return [a, b];
  }

  /** The handle store the example's principal gets, read from this process. */
  function storeOf(sess: LocalSess, table: string) {
    const stores = createPostgresHandleStore({ connectionString: url, table });
    open.push(stores);
    const binding = httpBindingOf(sess.origin, {
      workspaceId: sess.workspaceId,
      principalId: 'owner',
      clientId: 'example-client',
      grantId: 'example-grant',
      grantGeneration: '1',
      scopes: ['sess'],
      credential: () => sess.apiKey,
    });
    return stores.forBinding(binding);
  }

  /** A runtime, a table and two instances on it, each with a connected client (B's of `eraB`). */
  async function connectedPair(eraB: 'modern' | 'legacy', extra: Record<string, unknown> = {}) {
    const sess = await runtime();
    const table = freshTable();
    const [a, b] = await startPair(sess, table, extra);
    const headers = { authorization: `Bearer ${BEARER}` };
    const onA = await connectModern(a.url, headers);
    const onB = await (eraB === 'modern' ? connectModern : connectLegacy)(b.url, headers);
    open.push(onA, onB);
    return { sess, table, a, b, onA, onB };
  }

  describe('two handler instances in two processes on one PostgreSQL database', () => {
    it('request → answer → publish → answer → complete, every call on the other instance: one Session', async () => {
      // Two eras as well as two instances: a 2026 client on A, a 2025 client on B.
      const { sess, table, a, b, onA, onB } = await connectedPair('legacy');
      const clients: ToolCaller[] = [onA, onB];
      let turn = 0;
      const next = (): ToolCaller => clients[turn++ % 2]!;

      const created = await ok(next(), 'sess_request', { interaction: approveSurface }); // A
      const { handle, humanUrl } = created;
      audits.current.url(humanUrl!, 'sess link');
      audits.current.answer(approveAnswer.values, 'answer');
      expect(created).toMatchObject({ revision: 1, state: 'waiting' });

      // B sees the handle A created, still waiting.
      expect(await ok(next(), 'sess_response', { handle, revision: 1, wait_ms: 0 })).toMatchObject({
        state: 'waiting',
        revision: 1,
      });
      expect((await sess.submitAnswer(humanUrl!, approveAnswer)).status).toBe(303);
      const answered = await readApproved(next(), handle); // A

      const publish = {
        handle,
        expected_revision: 1,
        response_event_id: answered.response!.eventId,
        interaction: followUpSurface,
      };
      const published = await ok(next(), 'sess_publish', publish); // B
      expect(published).toMatchObject({ revision: 2, state: 'waiting' });
      // A repeats B's publish (same arguments): an idempotent replay, not a second revision.
      const replayed = await ok(next(), 'sess_publish', publish); // A
      expect(replayed).toMatchObject({ revision: 2, state: 'waiting' });

      await sess.submitAnswer(humanUrl!, { action: 'push', values: {} });
      const second = await ok(next(), 'sess_response', { handle, revision: 2, wait_ms: 5_000 }); // B
      expect(second).toMatchObject({ state: 'answered', response: { revision: 2, action: 'push' } });

      const completed = await ok(next(), 'sess_complete', {
        handle,
        expected_revision: 2,
        response_event_id: second.response!.eventId,
      }); // A
      expect(completed).toMatchObject({ revision: 2, state: 'completed' });
      // B reads the completed handle; the link is gone from it.
      const after = await ok(next(), 'sess_response', { handle, revision: 2, wait_ms: 0 }); // B
      expect(after.state).toBe('completed');
      expect(turn).toBe(8);

      expect(sess.stats.of().sessionsCreated).toBe(1);
      expect(sess.stats.of().revisionsPublished).toBe(1);
      expect(sess.stats.of().sessionsCompleted).toBe(1);
      expect(sess.sessions.list().map((s) => s.view.status)).toEqual(['completed']);

      // One row, written by both processes, finished, without the link or the answer.
      const { rows } = await admin.query(
        `SELECT handle, unfinished, version, record_text AS json FROM "public"."${table}"`,
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ handle, unfinished: false });
      expect(rows[0].version).toBeGreaterThanOrEqual(5);
      expect(JSON.parse(rows[0].json)).toMatchObject({ handle, state: { kind: 'completed' } });
      expect(rows[0].json).not.toContain(escapeToAscii(humanUrl!));
      expect(rows[0].json).not.toContain(escapeToAscii(approveAnswer.values.message as string));
      expect(await storeOf(sess, table).countUnfinished()).toBe(0);
      expect(a.stderr() + b.stderr()).toBe('');
    });

    /**
     * `count` concurrent `sess_request` calls of the example's one principal, alternating between
     * the instances: the outcomes by state or code, and how many each instance created.
     */
    async function concurrentCreates(pair: Awaited<ReturnType<typeof connectedPair>>, count: number) {
      // A caller repeats a call refused as retryable (a Sess read or the database timing out on a
      // loaded machine: nothing was created), as an agent would; what counts is where each ends.
      const create = async (i: number) => {
        for (let attempt = 1; ; attempt++) {
          const outcome = await call(i % 2 === 0 ? pair.onA : pair.onB, 'sess_request', {
            interaction: approveSurface,
          });
          if (outcome.ok || !outcome.error.retryable || attempt === 5) return outcome;
        }
      };
      const outcomes = await Promise.all(Array.from({ length: count }, (_, i) => create(i)));
      const tally: Record<string, number> = {};
      const created = [0, 0];
      for (const [i, outcome] of outcomes.entries()) {
        const key = outcome.ok ? outcome.interaction.state : outcome.error.code;
        tally[key] = (tally[key] ?? 0) + 1;
        if (outcome.ok) {
          audits.current.url(outcome.interaction.humanUrl!, 'sess link');
          created[i % 2]! += 1;
        } else {
          expect(outcome.error, 'a refusal that is final').toMatchObject({ retryable: false });
        }
      }
      const handles = new Set(outcomes.flatMap((o) => (o.ok ? [o.interaction.handle] : [])));
      return { tally, created, handles };
    }

    it(`150 concurrent sess_request calls across both instances: ${MAX_UNFINISHED} unfinished, 50 STATE_STORE_FULL`, async () => {
      // A quota above the cap, so the cap is what refuses.
      const pair = await connectedPair('modern', { maxOpenPerPrincipal: 1_000 });
      const { sess, table, a, b } = pair;
      const { tally, created, handles } = await concurrentCreates(pair, 150);
      expect(tally).toEqual({ waiting: MAX_UNFINISHED, STATE_STORE_FULL: 150 - MAX_UNFINISHED });
      expect(handles.size).toBe(MAX_UNFINISHED);
      // Both instances created handles: the cap held across processes, not within one.
      expect(created.every((n) => n > 0)).toBe(true);
      expect(await storeOf(sess, table).countUnfinished()).toBe(MAX_UNFINISHED);
      // Refused requests never reached Sess.
      expect(sess.stats.of().sessionsCreated).toBe(MAX_UNFINISHED);
      expect(a.stderr() + b.stderr()).toBe('');
    }, 60_000);

    it('100 concurrent sess_request calls of one principal across both instances, quota 50: exactly 50 open, 50 PRINCIPAL_QUOTA_REACHED', async () => {
      const pair = await connectedPair('modern', { maxOpenPerPrincipal: 50 });
      const { sess, table, a, b } = pair;
      const { tally, created, handles } = await concurrentCreates(pair, 100);
      expect(tally).toEqual({ waiting: 50, PRINCIPAL_QUOTA_REACHED: 50 });
      expect(handles.size).toBe(50);
      expect(created.every((n) => n > 0)).toBe(true);
      expect(await storeOf(sess, table).countUnfinished()).toBe(50);
      // Refused before Sess was called: 50 Sessions, no more.
      expect(sess.stats.of().sessionsCreated).toBe(50);
      expect(a.stderr() + b.stderr()).toBe('');
    }, 60_000);
  });

  describe('examples/postgres-http.ts in one process', () => {
    it('startPostgresHttpExample: two instances, one interaction across both', async () => {
      const sess = await runtime();
      const pair = await startPostgresHttpExample(exampleOptions(sess, freshTable()));
      open.push(pair);
      const headers = { authorization: `Bearer ${BEARER}` };
      const onA = await connectModern(pair.urls[0], headers);
      const onB = await connectModern(pair.urls[1], headers);
      open.push(onA, onB);
      expect(pair.urls[0]).not.toBe(pair.urls[1]);

      const created = await ok(onA, 'sess_request', { interaction: approveSurface });
      audits.current.url(created.humanUrl!, 'sess link');
      audits.current.answer(approveAnswer.values, 'answer');
      await sess.submitAnswer(created.humanUrl!, approveAnswer);
      const answered = await ok(onB, 'sess_response', {
        handle: created.handle,
        revision: 1,
        wait_ms: 5_000,
      });
      expect(answered.state).toBe('answered');
      const completed = await ok(onA, 'sess_complete', {
        handle: created.handle,
        expected_revision: 1,
        response_event_id: answered.response!.eventId,
      });
      expect(completed.state).toBe('completed');
      expect(sess.stats.of().sessionsCreated).toBe(1);

      // A wrong bearer token is refused by either instance.
      const stranger = connectModern(pair.urls[1], { authorization: 'Bearer not-the-right-token-000' });
      await expect(stranger).rejects.toThrow();
    });
  });
}
