/**
 * The JSDoc examples of `@sess.si/mcp/testing`, kept compiling by the type check. Not exported and
 * not run: each function shows one use as a reader would write it.
 */
import type { Surface } from '../core/surface.js';
import { startLocalSess } from './index.js';

const surface: Surface = {
  mode: 'interactive',
  title: 'Approve?',
  source: { kind: 'sess_surface', components: [] },
  actions: [{ id: 'approve', label: 'Approve', intent: 'approve' }],
};

/** `startLocalSess`: create a Session over the wire, answer it as a person, close. */
export async function exampleRound(): Promise<void> {
  const sess = await startLocalSess();
  const res = await fetch(`${sess.origin}/v1/sessions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${sess.apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': 'k1',
    },
    body: JSON.stringify({ interaction: surface }),
  });
  const session = (await res.json()) as { human_url: string };
  await sess.submitAnswer(session.human_url, { action: 'approve', values: {} });
  await sess.close();
}

/** `LocalFaults` and `LocalKeys`. */
export async function exampleFaultsAndKeys(): Promise<void> {
  const sess = await startLocalSess({ clock: { frozen: true } });
  sess.faults.fail('create', 503); // next create: 503 unavailable
  sess.faults.commitThenDrop('publish'); // next publish commits, then the socket closes
  sess.faults.tamperReceipt('get', { mode: 'signature' }, { times: Number.POSITIVE_INFINITY });
  const oldKid = sess.keys.activeKid();
  await sess.keys.rotate(); // the default workspace now signs with a new key
  sess.keys.remove(oldKid); // drop the old key from the JWKS
  await sess.keys.sign({ sid: 'ses_1' }); // sign any claims with the active key
  sess.clock.advance(60_000); // links expire by this clock
  await sess.close();
}
