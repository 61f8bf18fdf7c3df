/**
 * Ask respondent receipts may name their Ask (`ask`) and the respondent's name (`name`): the
 * local runtime signs both; the client checks them against the Ask view it read, refuses a
 * receipt that names another Ask or another name, and still verifies a receipt without them.
 */
import { describe, expect, it } from 'vitest';
import { base64UrlDecode } from '../../src/core/codec/base64url.js';
import type { SessApi, VerifyResponseInput } from '../../src/core/contract/ports.js';
import { createReceiptVerifier } from '../../src/sess/receipt.js';
import { answer, clientFor, expectSessError, idemKey, proofOf, surface, useRuntime } from './helpers.js';

const sess = useRuntime();

/** An Ask with one answered respondent (named when `name` is given), read back by `client`. */
async function answeredRespondent(client: SessApi, name?: string) {
  const s = surface('Which option?');
  const ask = await client.createAsk({
    surface: s,
    respondents: { max: 2, ...(name === undefined ? {} : { name: true }) },
    idempotencyKey: idemKey(),
  });
  const started = await sess.startRespondent(ask.humanUrl, name === undefined ? {} : { name });
  expect((await sess.submitAnswer(started.humanUrl!, answer())).status).toBe(303);
  const view = await client.getAsk(ask.askId);
  const respondent = view.respondents[0]!;
  const input = proofOf(await client.getSession(respondent.sessionId), s);
  return { askId: ask.askId, respondent, input };
}

function claimsOf(receipt: string): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(base64UrlDecode(receipt.split('.')[1]!)));
}

/** The same receipt, re-signed with the runtime's real key after `change` edits its claims. */
async function resigned(input: VerifyResponseInput, change: (claims: Record<string, unknown>) => void) {
  const claims = claimsOf(input.receipt);
  change(claims);
  return { ...input, receipt: await sess.keys.sign(claims) };
}

describe('Ask respondent receipts', () => {
  it('name the Ask and the respondent, and verify against the Ask view', async () => {
    const client = clientFor(sess);
    const { askId, respondent, input } = await answeredRespondent(client, 'Ana');
    expect(respondent.name).toBe('Ana');
    expect(claimsOf(input.receipt)).toMatchObject({ ask: askId, name: 'Ana', sid: respondent.sessionId });
    expect((await client.verifyResponse(input)).sessionId).toBe(respondent.sessionId);
  });

  it('a receipt naming another respondent or another Ask is a claims mismatch', async () => {
    const client = clientFor(sess);
    const { input } = await answeredRespondent(client, 'Ana');
    for (const change of [
      (c: Record<string, unknown>) => {
        c.name = 'Bob';
      },
      (c: Record<string, unknown>) => {
        c.ask = 'ask_another';
      },
    ]) {
      await expectSessError(client.verifyResponse(await resigned(input, change)), 'verification', {
        reason: 'claims_mismatch',
      });
    }
  });

  it('a name in the receipt of a respondent the view names not is a claims mismatch', async () => {
    const client = clientFor(sess);
    const { respondent, input } = await answeredRespondent(client);
    expect(respondent.name).toBeUndefined();
    expect(claimsOf(input.receipt)).not.toHaveProperty('name');
    expect((await client.verifyResponse(input)).sessionId).toBe(respondent.sessionId);
    const named = await resigned(input, (c) => {
      c.name = 'Eve';
    });
    await expectSessError(client.verifyResponse(named), 'verification', { reason: 'claims_mismatch' });
  });

  it('the claims are never required: a receipt without them verifies', async () => {
    const client = clientFor(sess);
    const { input } = await answeredRespondent(client, 'Ana');
    const bare = await resigned(input, (c) => {
      delete c.ask;
      delete c.name;
    });
    expect((await client.verifyResponse(bare)).eventId).toBe(input.eventId);
  });

  it('a verifier given the Ask context checks them; without one it does not compare them', async () => {
    const client = clientFor(sess);
    const { askId, input } = await answeredRespondent(client, 'Ana');
    const verifier = createReceiptVerifier({ origin: sess.origin, allowInsecureLocalhost: true });
    const check = { ...input, workspaceId: sess.workspaceId };
    await verifier.verify({ ...check, ask: { askId, respondentName: 'Ana' } });
    await expectSessError(
      verifier.verify({ ...check, ask: { askId, respondentName: 'Bob' } }),
      'verification',
      {
        reason: 'claims_mismatch',
      },
    );
    await expectSessError(
      verifier.verify({ ...check, ask: { askId: 'ask_x', respondentName: 'Ana' } }),
      'verification',
      {
        reason: 'claims_mismatch',
      },
    );
    expect((await verifier.verify(check)).sessionId).toBe(input.sessionId);
  });
});
