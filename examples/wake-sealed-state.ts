/**
 * Example: seal a paused run's saved state at rest, as both wake recipes do (`wake-langgraph.ts`,
 * `wake-openai-agents.ts`). A paused run's state holds the conversation so far, and with it the
 * result of `sess_request`: the Sess link, a bearer capability that lets whoever holds it answer.
 * So the saved state is a secret: it is sealed with AES-256-GCM under a key from the host's
 * secret store before it is stored, and it is never logged.
 *
 * It does not choose where the key lives or rotate it: keep the key in your secret store (a KMS,
 * a vault, your platform's secrets), apart from the database that keeps the sealed states.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

function checkKey(key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.length !== 32) {
    throw new TypeError('the state key must be 32 bytes (AES-256), from your secret store');
  }
}

/** Seal `plain` under `key` (32 bytes): a fresh IV, the tag, then the ciphertext. */
export function sealState(plain: Uint8Array, key: Uint8Array): Uint8Array {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return new Uint8Array(Buffer.concat([iv, cipher.getAuthTag(), body]));
}

/** Open what {@link sealState} sealed; throws when it was changed or sealed under another key. */
export function openState(sealed: Uint8Array, key: Uint8Array): Uint8Array {
  checkKey(key);
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error('not a sealed state');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return new Uint8Array(
    Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]),
  );
}
