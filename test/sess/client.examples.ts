/**
 * The JSDoc examples of `src/sess` as code the type check covers (never run by vitest). Keep them
 * in step with the `@example` blocks of `client.ts`, `origin.ts` and `receipt.ts`.
 */
import type { Surface } from '../../src/core/surface.js';
import { createReceiptVerifier, createSessClient, validateSessOrigin } from '../../src/sess/index.js';

declare const surface: Surface;
declare const workspaceId: string;
declare const sessionId: string;
declare const eventId: string;
declare const receipt: string;

export async function clientExample(): Promise<void> {
  const sess = createSessClient({
    origin: 'https://api.sess.si',
    credential: () => process.env.SESS_API_KEY ?? '',
  });
  const view = await sess.createSession({ surface, idempotencyKey: crypto.randomUUID() });
  void view;
}

export function originExample(): string[] {
  return [
    validateSessOrigin('https://API.sess.si/'), // 'https://api.sess.si'
    validateSessOrigin('http://127.0.0.1:8787', { allowInsecureLocalhost: true }), // 'http://127.0.0.1:8787'
  ];
}

export async function verifierExample(): Promise<void> {
  const verifier = createReceiptVerifier({ origin: 'https://api.sess.si' });
  const answer = { action: 'approve', values: {} };
  await verifier.verify({ workspaceId, sessionId, revision: 1, eventId, surface, answer, receipt });
  // One verifier shared by the clients a face builds per call keeps one key-set cache.
  const perCall = createSessClient({
    origin: 'https://api.sess.si',
    credential: () => 'sk_…',
    receiptVerifier: verifier,
  });
  void perCall;
}
