/**
 * Fencing of the file store's lease under the engine's own changes: every record write of
 * `sess_request`, `sess_ask`, `sess_response`, `sess_publish`, `sess_complete` and `sess_withdraw`
 * (of a Session and of an Ask) is a cell. A worker process runs the tool call through a real
 * engine and stops itself (SIGSTOP) at the rename of that write, past the point where it last
 * checked its lease; another process takes the lease over and changes the same record; then the
 * first goes on. Its write must land nowhere: the change of the process that took over stands,
 * and no version is lost or written twice.
 *
 * Real processes on one profile, the local Sess runtime of this process. `SESS_MCP_TEST_LEASE_MS`
 * shortens the lease so a cell pauses for about a second (`file-fencing.test.ts` has the cell
 * with the real 15 s lease and every step of one write).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { HandleStore, StdioBinding } from '../../src/core/contract/ports.js';
import type { ToolName } from '../../src/core/contract/tool-args.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { LEASE_GRACE_MS } from '../../src/store/file/lock.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { type Harness, startHarness } from '../engine/harness.js';
import { followUpSurface, lunchAsk } from '../support/surfaces.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { startWorker, untilStopped } from './spawn-worker.js';
import type { WorkerJob } from './worker.js';

const tempStateDir = useTempDirs('sess-mcp-fencing-engine-');
const SHORT_LEASE = { SESS_MCP_TEST_LEASE_MS: '600' };

let open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.map((h) => h.close()));
  open = [];
});

/** What a cell's tool call acts on, made in this process, and the call itself. */
interface Operation {
  name: string;
  /** How many record writes the call makes (checked below against a counting store). */
  writes: number;
  /** Bring a fresh profile to where the call starts; returns the call's arguments. */
  prepare(h: Harness): Promise<{ tool: ToolName; args: Record<string, unknown>; handle?: string }>;
}

const request = { interaction: followUpSurface };

const OPERATIONS: Operation[] = [
  { name: 'sess_request', writes: 2, prepare: async () => ({ tool: 'sess_request', args: request }) },
  { name: 'sess_ask', writes: 2, prepare: async () => ({ tool: 'sess_ask', args: lunchAsk() }) },
  {
    name: 'sess_response (recording an answer)',
    writes: 1,
    async prepare(h) {
      const { created, response } = await h.submitted();
      return { tool: 'sess_response', args: { ...response, wait_ms: 0 }, handle: created.handle };
    },
  },
  {
    name: 'sess_publish',
    writes: 2,
    async prepare(h) {
      const { created, publish } = await h.answered();
      return { tool: 'sess_publish', args: publish, handle: created.handle };
    },
  },
  {
    name: 'sess_complete',
    writes: 2,
    async prepare(h) {
      const { created, complete } = await h.answered();
      return { tool: 'sess_complete', args: complete, handle: created.handle };
    },
  },
  {
    name: 'sess_withdraw of a Session',
    writes: 2,
    async prepare(h) {
      const created = await h.request();
      return {
        tool: 'sess_withdraw',
        args: { handle: created.handle, expected_revision: 1 },
        handle: created.handle,
      };
    },
  },
  {
    name: 'sess_withdraw of an Ask (close)',
    writes: 2,
    async prepare(h) {
      const created = await h.ok('sess_ask', lunchAsk());
      return {
        tool: 'sess_withdraw',
        args: { handle: created.handle, expected_revision: 1 },
        handle: created.handle,
      };
    },
  },
];

/**
 * What the paused call reports. A create whose first write is fenced wrote nothing and sent
 * nothing: the profile was busy, try again. A create fenced after Sess created the Session keeps
 * its saved intent for the owner. Every other fenced write is a compare-and-set that lost.
 */
function refusalOf(op: Operation, write: number): string {
  if (op.name === 'sess_request' || op.name === 'sess_ask') {
    return write === 1 ? 'STATE_STORE_ERROR:busy' : 'CREATED_NOT_SAVED';
  }
  return 'INVALID_STATE:stale_version';
}

/** A store view that counts the writes made through it. */
function counting(view: HandleStore, count: { writes: number }): HandleStore {
  return {
    ...view,
    create: (record, limits) => {
      count.writes += 1;
      return view.create(record, limits);
    },
    update: (record, expected) => {
      count.writes += 1;
      return view.update(record, expected);
    },
    delete: (handle, expected) => {
      count.writes += 1;
      return view.delete(handle, expected);
    },
  };
}

/**
 * One cell: the call of `op` stops at the rename of its `write`-th record write; meanwhile
 * another process takes the lease over and writes `B` as `updatedAt` of the record the call works
 * on (of another record, when the paused write is the create of the call's own).
 */
async function pauseCell(op: Operation, write: number) {
  const stateDir = await tempStateDir();
  const stores = createFileHandleStore({ stateDir, profile: 'default' });
  const h = await startHarness({ stores });
  open.push(h);
  const binding = h.binding as StdioBinding;
  const store = stores.forBinding(binding);
  const call = await op.prepare(h);
  // A record of its own for B when the paused write is the create of the call's record.
  const bystander = (await h.request()).handle;
  const bystanderVersion = (await store.get(bystander))!.version;
  const before = call.handle === undefined ? undefined : await store.get(call.handle);
  await sleep(LEASE_GRACE_MS + 50); // this process's lease is released
  const env = { ...SHORT_LEASE, SESS_WORKER_ORIGIN: h.sess.origin, SESS_WORKER_API_KEY: h.sess.apiKey };
  const job = (more: Partial<WorkerJob>): WorkerJob => ({
    store: { kind: 'file', stateDir, profile: 'default' },
    job: 'once',
    binding,
    count: 1,
    ...more,
  });
  const a = await startWorker(
    job({ job: 'tool', tool: { tool: call.tool, args: call.args }, pauseAt: 'rename', pauseAtWrite: write }),
    env,
  );
  const creating = call.handle === undefined;
  const target = creating && write === 1 ? bystander : call.handle;
  const b = await startWorker(
    job({ label: 'B', ...(target === undefined ? { pick: 'newest' } : { handle: target }) }),
    env,
  );
  try {
    const aDone = a.go();
    await untilStopped(a.pid);
    const bDone = await b.go();
    process.kill(a.pid, 'SIGCONT');
    const aResult = await aDone;
    const records = await store.listUnfinished();
    const all = await Promise.all(
      [...new Set([...records.map((r) => r.record.handle), ...(call.handle ? [call.handle] : [])])].map(
        (handle) => store.get(handle),
      ),
    );
    return {
      a: aResult,
      b: bDone,
      before,
      all: all.filter((r) => r !== undefined),
      bystander,
      bystanderVersion,
    };
  } finally {
    a.stop();
    b.stop();
  }
}

describe('file store fencing under the engine: a tool call paused past its lease at the rename of each of its writes', () => {
  it('the table names every record write of each call (counted through a store)', async () => {
    for (const op of OPERATIONS) {
      const count = { writes: 0 };
      const stores = createMemoryHandleStore();
      const h = await startHarness({ stores, wrapStore: (view) => counting(view, count) });
      open.push(h);
      const call = await op.prepare(h);
      count.writes = 0;
      const result = await h.call(call.tool, call.args);
      expect(result.ok, op.name).toBe(true);
      expect(count.writes, op.name).toBe(op.writes);
    }
  }, 60_000);

  for (const op of OPERATIONS) {
    for (let write = 1; write <= op.writes; write++) {
      it(`${op.name}, write ${write} of ${op.writes}: the change of the process that took over stands`, async () => {
        const cell = await pauseCell(op, write);
        // B took the lease over and wrote; A's paused write landed nowhere and its call failed.
        expect(cell.b).toMatchObject({ ok: 1 });
        expect(cell.a).toEqual({ [refusalOf(op, write)]: 1 });
        const bWrote = cell.all.filter((r) => r!.record.updatedAt === 'B');
        expect(bWrote, 'B wrote exactly one record').toHaveLength(1);
        const [written] = bWrote;
        if (cell.before !== undefined) {
          // The call's record: A's earlier writes, then B's, and nothing after.
          expect(written!.record.handle).toBe(cell.before.record.handle);
          expect(written!.version).toBe(cell.before.version + write);
        } else if (write === 1) {
          // A's create never landed: only the bystander and the records made before exist.
          expect(written!.record.handle).toBe(cell.bystander);
          expect(written!.version).toBe(cell.bystanderVersion + 1);
          expect(cell.all.map((r) => r!.record.handle)).toEqual([cell.bystander]);
        } else {
          // A created its record (version 1); B's change is version 2; A's next write is gone.
          expect(written!.record.handle).not.toBe(cell.bystander);
          expect(written!.version).toBe(write);
        }
      }, 60_000);
    }
  }
});
