/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/): the `whsec_` secret rule, and the
 * three headers of one signed attempt. `webhook-signature` holds one `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">` per secret, space-separated, so a receiver that knows any one of
 * them verifies: that is how a secret is rotated (send with the old and the new, then drop the
 * old).
 *
 * It uses WebCrypto only (`crypto.subtle`), so it runs on Node and on edge runtimes alike; it
 * imports no `node:` module. It does not choose the timestamp (the sender signs every attempt
 * anew with its clock's current second, so a retry hours later still verifies within a
 * receiver's tolerance) and never writes a secret into a message.
 */
import { base64UrlDecode, base64UrlEncode } from '../../core/codec/base64url.js';
import type { ValueRule } from '../../core/contract/rules.js';

/** The prefix of a Standard Webhooks secret. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** The shortest and the longest key a secret may hold, in bytes (Standard Webhooks' range). */
export const WEBHOOK_SECRET_BYTES = { min: 24, max: 64 } as const;

/** The most secrets signed with at once (a rotation needs two). */
export const MAX_WEBHOOK_SECRETS = 8;

/** The headers of one signed attempt, by their lower-case names. */
export interface WebhookSignatureHeaders {
  /** The event id: the same on every attempt of one event. */
  'webhook-id': string;
  /** Whole seconds since the Unix epoch at which this attempt was signed. */
  'webhook-timestamp': string;
  /** `v1,<base64>` per secret, separated by single spaces. */
  'webhook-signature': string;
}

/**
 * The key of a secret: the standard base64 (`+`, `/`; padding optional, correct when present)
 * after `whsec_`, of {@link WEBHOOK_SECRET_BYTES} bytes, else `undefined`. Through the one strict
 * base64url decoder, so one key has one text.
 */
function secretKeyBytes(secret: string): Uint8Array<ArrayBuffer> | undefined {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return undefined;
  const text = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  const unpadded = text.replace(/={1,2}$/, '');
  if (unpadded.length !== text.length && text.length % 4 !== 0) return undefined;
  if (/[-_=]/.test(unpadded)) return undefined;
  const bytes = base64UrlDecode(unpadded.replaceAll('+', '-').replaceAll('/', '_'));
  if (bytes === undefined) return undefined;
  if (bytes.length < WEBHOOK_SECRET_BYTES.min || bytes.length > WEBHOOK_SECRET_BYTES.max) return undefined;
  return bytes;
}

/** A Standard Webhooks secret: `whsec_` and the base64 of a 24- to 64-byte key. */
export const WEBHOOK_SECRET_RULE: ValueRule<string> = {
  text: `"${WEBHOOK_SECRET_PREFIX}" followed by the standard base64 of a ${WEBHOOK_SECRET_BYTES.min}- to ${WEBHOOK_SECRET_BYTES.max}-byte key`,
  test: (value): value is string => typeof value === 'string' && secretKeyBytes(value) !== undefined,
};

/** Standard base64 with padding, as `webhook-signature` carries it. */
function base64(bytes: Uint8Array): string {
  const url = base64UrlEncode(bytes).replaceAll('-', '+').replaceAll('_', '/');
  return url.padEnd(Math.ceil(url.length / 4) * 4, '=');
}

/** Signs attempts with one set of secrets; the keys are imported once, on first use. */
export interface WebhookSigner {
  /**
   * The three headers for `body` sent as event `id` at `timestampSeconds` (the current second
   * of each attempt).
   */
  sign(id: string, timestampSeconds: number, body: string): Promise<WebhookSignatureHeaders>;
}

/**
 * A signer for `secrets` (1 to {@link MAX_WEBHOOK_SECRETS}, each {@link WEBHOOK_SECRET_RULE}), all
 * of which sign every attempt, in the order given.
 *
 * @throws TypeError when the list or a secret breaks the rule; the message never holds a secret.
 */
export function createWebhookSigner(secrets: readonly string[]): WebhookSigner {
  if (!Array.isArray(secrets) || secrets.length === 0 || secrets.length > MAX_WEBHOOK_SECRETS) {
    throw new TypeError(`webhook secrets must be a list of 1 to ${MAX_WEBHOOK_SECRETS} secrets.`);
  }
  const raw = secrets.map((secret, index) => {
    const bytes = typeof secret === 'string' ? secretKeyBytes(secret) : undefined;
    if (bytes === undefined) {
      throw new TypeError(`webhook secret ${index + 1} must be ${WEBHOOK_SECRET_RULE.text}.`);
    }
    return bytes;
  });
  let keys: Promise<CryptoKey[]> | undefined;
  const encoder = new TextEncoder();
  return {
    async sign(id, timestampSeconds, body) {
      keys ??= Promise.all(
        raw.map((bytes) =>
          crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
        ),
      );
      const timestamp = String(Math.floor(timestampSeconds));
      const signed = encoder.encode(`${id}.${timestamp}.${body}`);
      const macs = await Promise.all((await keys).map((key) => crypto.subtle.sign('HMAC', key, signed)));
      return {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': macs.map((mac) => `v1,${base64(new Uint8Array(mac))}`).join(' '),
      };
    },
  };
}
