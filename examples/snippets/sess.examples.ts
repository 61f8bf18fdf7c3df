/**
 * The JSDoc examples of the Sess client (`src/sess`). The type check covers this file and
 * `npm run snippets` copies each region into the JSDoc that names it; it is never run.
 */
import type { Answer, Surface } from '../../src/index.js';
import { createReceiptVerifier, createSessClient, validateSessOrigin } from '../../src/sess/index.js';

declare const surface: Surface;
declare const answer: Answer;
declare const workspaceId: string;
declare const sessionId: string;
declare const revision: number;
declare const eventId: string;
declare const receipt: string;
declare function credential(): string;

export async function clientExample(): Promise<unknown> {
  //#region createSessClient
  const sess = createSessClient({
    origin: 'https://api.sess.si',
    credential: () => process.env.SESS_API_KEY ?? '',
  });
  const view = await sess.createSession({ surface, idempotencyKey: crypto.randomUUID() });
  //#endregion
  return view;
}

export function originExample(): void {
  //#region validateSessOrigin
  validateSessOrigin('https://API.sess.si/'); // 'https://api.sess.si'
  validateSessOrigin('http://127.0.0.1:8787', { allowInsecureLocalhost: true }); // 'http://127.0.0.1:8787'
  //#endregion
}

export async function verifierExample(): Promise<void> {
  //#region createReceiptVerifier
  const verifier = createReceiptVerifier({ origin: 'https://api.sess.si' });
  await verifier.verify({ workspaceId, sessionId, revision, eventId, surface, answer, receipt });
  // One verifier shared by the clients a face builds per call keeps one key-set cache:
  const perCall = createSessClient({ origin: 'https://api.sess.si', credential, receiptVerifier: verifier });
  //#endregion
  void perCall;
}
