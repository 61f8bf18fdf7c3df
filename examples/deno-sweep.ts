/**
 * Example: the cron side of a Deno deployment whose MCP endpoint keeps its handles in PostgreSQL.
 * Every minute `Deno.cron` runs one bounded `sweep` of the watcher: each waiting interaction is
 * read once, a verified answer is saved as a tool call would save it, and each event goes to
 * `resumeAgent`, so an agent that stopped waiting can be resumed when the person answers.
 *
 * Run it where `@sess.si/mcp` and `pg` are installed: `deno run --unstable-cron --allow-net
 * --allow-env --allow-sys examples/deno-sweep.ts` with `DATABASE_URL`, `SESS_API_KEY` and
 * `SESS_WORKSPACE_ID` set (the same as the endpoint's). With `--once` it runs one sweep, prints
 * what it did and exits (for a system cron, or a test). The package is imported by its name, as
 * an application does.
 */
import type { HttpBinding, WakeEvent } from '@sess.si/mcp';
import { createSessMcpWatcher } from '@sess.si/mcp/http';
import { createPostgresHandleStore } from '@sess.si/mcp/store/postgres';

/** The part of the `Deno` global this module uses. */
interface DenoLike {
  env: { get(name: string): string | undefined };
  args: string[];
  cron?(name: string, schedule: string, handler: () => Promise<void>): Promise<void>;
}

const deno = (globalThis as unknown as { Deno?: DenoLike }).Deno;
if (deno === undefined) throw new Error('run this file with Deno');

/** The endpoint's one principal, as its `authenticate` gives it. */
const OWNER = { principalId: 'owner', clientId: 'edge-example', grantId: 'edge-grant', grantGeneration: '1' };
/** How long one sweep may take: well inside the minute between two. */
const SWEEP_BUDGET_MS = 25_000;

const workspaceId = deno.env.get('SESS_WORKSPACE_ID') ?? '';
const origin = deno.env.get('SESS_API_ORIGIN');
const table = deno.env.get('HANDLE_TABLE');
const store = createPostgresHandleStore({
  connectionString: deno.env.get('DATABASE_URL') ?? '',
  ...(table === undefined ? {} : { table }),
});

/**
 * Hand an interaction event to whatever resumes the agent (a queue, a workflow). The event is a
 * reference only: the agent reads the answer with `sess_response`. A throw is retried later.
 */
async function resumeAgent(event: WakeEvent): Promise<void> {
  console.log(`sess-mcp: ${event.type} at revision ${event.revision}`);
}

/** The Sess key of a binding now: the endpoint's one grant, else none (revoked, unknown). */
function credentialFor(binding: HttpBinding): string | undefined {
  const current =
    binding.workspaceId === workspaceId &&
    binding.principalId === OWNER.principalId &&
    binding.clientId === OWNER.clientId &&
    binding.grantId === OWNER.grantId &&
    binding.grantGeneration === OWNER.grantGeneration;
  return current ? deno?.env.get('SESS_API_KEY') : undefined;
}

const watcher = createSessMcpWatcher({
  handleStores: store,
  credentialFor,
  onEvent: resumeAgent,
  ...(origin === undefined ? {} : { sessOrigin: origin }),
  ...(deno.env.get('SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST') === '1' ? { allowInsecureLocalhost: true } : {}),
});

async function sweep(): Promise<void> {
  const result = await watcher.sweep({ budgetMs: SWEEP_BUDGET_MS });
  console.log(`sess-mcp sweep ${JSON.stringify(result)}`);
}

if (deno.args.includes('--once')) {
  await sweep();
  await store.close();
} else if (deno.cron === undefined) {
  throw new Error('Deno.cron is missing: run with --unstable-cron (or on Deno Deploy), or pass --once');
} else {
  await deno.cron('sess-mcp sweep', '* * * * *', sweep);
}
