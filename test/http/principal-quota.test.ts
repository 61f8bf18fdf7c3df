/**
 * One principal cannot fill the Sess plan every caller of an endpoint shares: the HTTP face
 * counts a principal's open interactions over all its clients and grants, and refuses a create
 * over its quota with `PRINCIPAL_QUOTA_REACHED` (class `create_rejected`) before Sess is called.
 * Real MCP clients over HTTP, the local runtime with a plan of 150 open Sessions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_OPEN_PER_PRINCIPAL } from '../../src/core/contract/ports.js';
import { useCleanup } from '../support/cleanup.js';
import { approveSurface } from '../support/surfaces.js';
import { call, type HttpHarness, ok, startHttpHarness } from './harness.js';
import { connectModern } from './helpers.js';

const PLAN = 150;
const open = useCleanup();
let harness: HttpHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The harness with a runtime whose plan holds {@link PLAN} open Sessions. */
async function start(extra: { maxOpenPerPrincipal?: number } = {}): Promise<HttpHarness> {
  harness = await startHttpHarness(extra, undefined, { plan: { maxOpenSessions: PLAN } });
  return harness;
}

/** A connected MCP client of the principal `principalId`, through its own OAuth client. */
async function clientOf(h: HttpHarness, principalId: string, clientId: string) {
  const token = `${principalId}-${clientId}-token-0123456789`;
  h.principal(token, { principalId, clientId, grantId: `${clientId}-grant` });
  const client = await connectModern(h.server.url, { authorization: `Bearer ${token}` });
  open.push(client);
  return client;
}

/** `count` `sess_request` calls one after another; the outcomes by state or code. */
async function requests(client: Awaited<ReturnType<typeof clientOf>>, count: number) {
  const tally: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const outcome = await call(client, 'sess_request', { interaction: approveSurface });
    const key = outcome.ok ? outcome.interaction.state : outcome.error.code;
    tally[key] = (tally[key] ?? 0) + 1;
  }
  return tally;
}

describe('the per-principal quota of the HTTP face', () => {
  it(`plan ${PLAN}, quota 50: Alice's 51st create is refused over three clients, before Sess; Bob's first succeeds`, async () => {
    const h = await start({ maxOpenPerPrincipal: 50 });
    const alice = [
      await clientOf(h, 'alice', 'client_1'),
      await clientOf(h, 'alice', 'client_2'),
      await clientOf(h, 'alice', 'client_3'),
    ];
    expect(await requests(alice[0]!, 30)).toEqual({ waiting: 30 });
    // A new client registration of the same person does not get a quota of its own.
    expect(await requests(alice[1]!, 20)).toEqual({ waiting: 20 });
    const refused = (
      await alice[2]!.callTool({ name: 'sess_request', arguments: { interaction: approveSurface } })
    ).structuredContent as { error: Record<string, unknown>; next: string };
    expect(refused.error).toMatchObject({ code: 'PRINCIPAL_QUOTA_REACHED', limit: 50, retryable: false });
    expect(refused.next).toContain('withdraw one you no longer need');
    expect(h.sess.stats.of().sessionsCreated).toBe(50);

    const bob = await clientOf(h, 'bob', 'client_1');
    const first = await ok(bob, 'sess_request', { interaction: approveSurface });
    expect(first.state).toBe('waiting');

    // Withdrawing one of Alice's frees a place for her.
    const listed = (await alice[0]!.callTool({ name: 'sess_list', arguments: { limit: 1 } }))
      .structuredContent as {
      items: { handle: string; revision: number }[];
    };
    const [item] = listed.items;
    await ok(alice[0]!, 'sess_withdraw', { handle: item!.handle, expected_revision: item!.revision });
    expect((await ok(alice[2]!, 'sess_request', { interaction: approveSurface })).state).toBe('waiting');
  }, 60_000);

  it(`by default (${DEFAULT_MAX_OPEN_PER_PRINCIPAL}), one person asking ${PLAN} times leaves the plan room for the next person`, async () => {
    const h = await start();
    const alice = await clientOf(h, 'alice', 'client_1');
    expect(await requests(alice, PLAN)).toEqual({
      waiting: DEFAULT_MAX_OPEN_PER_PRINCIPAL,
      PRINCIPAL_QUOTA_REACHED: PLAN - DEFAULT_MAX_OPEN_PER_PRINCIPAL,
    });
    const bob = await clientOf(h, 'bob', 'client_9');
    expect((await ok(bob, 'sess_request', { interaction: approveSurface })).state).toBe('waiting');
    expect(h.sess.stats.of().sessionsCreated).toBe(DEFAULT_MAX_OPEN_PER_PRINCIPAL + 1);
  }, 60_000);
});
