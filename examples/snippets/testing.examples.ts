/**
 * The JSDoc examples of `@sess.si/mcp/testing`. The type check covers this file and
 * `npm run snippets` copies each region into the JSDoc that names it; it is never run.
 */
import type { Surface } from '../../src/index.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';

const surface: Surface = {
  mode: 'interactive',
  title: 'Approve?',
  source: { kind: 'sess_surface', components: [] },
  actions: [{ id: 'approve', label: 'Approve', intent: 'approve' }],
};

export async function roundExample(): Promise<void> {
  //#region startLocalSess
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
  //#endregion
}

export function faultsExample(sess: LocalSess): void {
  //#region LocalFaults
  sess.faults.fail('create', 503); // next create: 503 unavailable
  sess.faults.commitThenDrop('publish'); // next publish commits, then the socket closes
  sess.faults.tamperReceipt('get', { mode: 'signature' }, { times: Number.POSITIVE_INFINITY });
  //#endregion
}

export async function keysExample(sess: LocalSess, claims: Record<string, unknown>): Promise<string> {
  //#region LocalKeys
  const oldKid = sess.keys.activeKid();
  const kid = await sess.keys.rotate(); // the default workspace now signs with `kid`
  sess.keys.remove(oldKid); // drop the old key from the JWKS
  const jws = await sess.keys.sign(claims); // sign any claims with the active key
  //#endregion
  return `${kid} ${jws}`;
}
