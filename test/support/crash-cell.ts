/**
 * What every crash suite over real `sess-mcp` processes shares: one cell's state directory and its
 * servers (started with or without `SESS_MCP_TEST_CRASH_AT`), the call that is cut short by the
 * SIGKILL, the check that every record file still parses, the tally the suites print, and the
 * one-field Surface their Sessions ask.
 *
 * It decides no expectation of a step: each suite states what a crash at its steps must leave.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Surface } from '../../src/core/model/surface.js';
import { openProfileRecords } from '../../src/store/file/index.js';
import type { LocalSess } from '../../src/testing/index.js';
import { connectStdio, type StdioSession, serverEnv, tempStateDir } from '../stdio/harness.js';
import { createSecretsAudit, type SecretsAudit } from './audit.js';
import type { StepName } from './durable-steps.js';
import { surfaceOf } from './surfaces.js';

/** Steps after which the request has reached Sess. */
export const SENT_STEPS: ReadonlySet<StepName> = new Set<StepName>([
  'after_request_sent',
  'after_response',
  'before_record_saved',
  'after_record_saved',
]);

/**
 * A one-field Surface (`note`) titled `title`, each cell's own, so a cell counts only its own
 * Sessions; the person answers with `yes` (or `no`).
 */
export function noteSurface(title: string): Surface {
  return surfaceOf(
    title,
    [{ type: 'field', name: 'note', label: 'Note', schema: { type: 'string', maxLength: 200 } }],
    [
      { id: 'yes', label: 'Yes', intent: 'approve' },
      { id: 'no', label: 'No', intent: 'reject' },
    ],
  );
}

/** What a crash suite counts and prints. */
export interface CrashTally {
  cells: number;
  lost: number;
  duplicated: number;
  unparsable: number;
  sentUnknown: number;
}

/** A tally at zero. */
export function createCrashTally(): CrashTally {
  return { cells: 0, lost: 0, duplicated: 0, unparsable: 0, sentUnknown: 0 };
}

/**
 * A killed client may have written a request the runtime has not finished handling yet; wait
 * until the runtime has no request in flight from it (a short bounded pause: the runtime exposes
 * no per-request event for a connection whose client is gone).
 */
export const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 250));

/**
 * Every file under `dir` that is a record file must parse as JSON with a record inside, with mode
 * 0600. Returns how many there are; an unparsable one is counted in `tally` and fails the test.
 */
export async function recordFilesParse(dir: string, tally: CrashTally): Promise<number> {
  let count = 0;
  const walk = async (path: string): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.name.endsWith('.json')) {
        count += 1;
        try {
          const parsed = JSON.parse(await readFile(full, 'utf8')) as { record?: unknown };
          expect(parsed.record, full).toBeTypeOf('object');
        } catch (error) {
          tally.unparsable += 1;
          throw error;
        }
        // Owner-private: mode 0600.
        expect((await stat(full)).mode & 0o777).toBe(0o600);
      }
    }
  };
  await walk(dir);
  return count;
}

/** One cell: its own state directory, the servers started on it and its secrets audit. */
export interface CrashCell {
  audit: SecretsAudit;
  dir: string;
  /** The API key the cell's servers use. */
  apiKey: string;
  env(crashAt?: string): Record<string, string>;
  /** Start a server on the cell's state directory, killing itself at `crashAt` when given. */
  start(crashAt?: string): Promise<StdioSession>;
  servers: StdioSession[];
  /** The records of the state directory, as the owner's list shows them. */
  records(): Promise<Array<{ handle: string; state?: string }>>;
  /** Kill every server, check the audit and remove the state directory. */
  done(): Promise<void>;
}

/** Open a cell against `sess`, with its first API key unless `apiKey` is given. */
export async function openCrashCell(sess: LocalSess, options: { apiKey?: string } = {}): Promise<CrashCell> {
  const apiKey = options.apiKey ?? sess.apiKey;
  const audit = createSecretsAudit();
  audit.secret(apiKey, 'api key');
  const state = await tempStateDir();
  const servers: StdioSession[] = [];
  const env = (crashAt?: string) =>
    serverEnv({
      SESS_API_KEY: apiKey,
      SESS_API_ORIGIN: sess.origin,
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      SESS_MCP_STATE_DIR: state.dir,
      SESS_MCP_TEST_CRASH_AT: crashAt,
    });
  return {
    audit,
    dir: state.dir,
    apiKey,
    env,
    servers,
    async start(crashAt) {
      const server = await connectStdio({ client: 'v1', env: env(crashAt), audit });
      servers.push(server);
      return server;
    },
    records: async () =>
      (await openProfileRecords({ stateDir: state.dir }).list()).map((r) => ({
        handle: r.handle,
        ...(r.state === undefined ? {} : { state: r.state }),
      })),
    async done() {
      await Promise.all(servers.map((s) => s.kill()));
      audit.assertClean();
      await state.remove();
    },
  };
}

/**
 * Call a tool on a server that is about to SIGKILL itself; resolves once it is gone. A call that
 * is answered instead fails at once: the tool never reached the step.
 */
export async function crashes(
  server: StdioSession,
  tool: string,
  args: Record<string, unknown>,
): Promise<void> {
  const call = server.callTool(tool, args);
  const answered = await call.then(
    () => true,
    () => false,
  );
  if (answered) expect.fail(`${tool} was answered: the server did not die at its crash step`);
  await server.exited();
  await expect(call).rejects.toThrow();
}
