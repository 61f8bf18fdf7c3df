/**
 * Compact JWS with Ed25519 (`alg: "EdDSA"`), the envelope of a Sess receipt: sign, split, and
 * check a signature against a public JWK. The local runtime signs with it; the client verifies
 * with it.
 *
 * Uses WebCrypto (`crypto.subtle`, `{ name: 'Ed25519' }`) and `TextEncoder`, so it runs on Node 20+
 * and edge runtimes; a signature is checked by the runtime's own synchronous Ed25519 where there is
 * one (`native-crypto.ts`), which answers the same. It knows nothing of receipt claims, key sets or caching: which key
 * to trust and what the claims must say are decided by the caller (`wire.ts` describes the claims).
 */
import { base64UrlDecode, base64UrlEncode } from '../core/codec/base64url.js';
import { isUsableEd25519PublicKey } from './ed25519-point.js';
import { nativeEd25519Verify, noteEd25519PublicKey } from './native-crypto.js';

/** The `typ` header of a Sess receipt. */
export const RECEIPT_TYP = 'sess-receipt+jwt';

/** The only JWS algorithm Sess uses. */
export const JWS_ALG = 'EdDSA';

/** Longest compact JWS {@link parseCompactJws} accepts, in characters. */
export const MAX_JWS_LENGTH = 8192;

/** A public Ed25519 key as JWK (RFC 8037), as it appears in a Sess key set. */
export interface Ed25519PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  /** The 32-byte public key, base64url without padding. */
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
  /** The workspace whose receipts this key signs. */
  ws: string;
}

/** A signing key pair: the private key never leaves its holder; `publicJwk` goes in the key set. */
export interface Ed25519SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: Ed25519PublicJwk;
}

/** A compact JWS split into its parts. Nothing in it has been verified yet. */
export interface ParsedCompactJws {
  /** The decoded protected header (a JSON object). */
  header: Record<string, unknown>;
  /** The decoded payload (a JSON object). */
  payload: Record<string, unknown>;
  /** The ASCII bytes of `<header>.<payload>`, what the signature covers. */
  signingInput: Uint8Array<ArrayBuffer>;
  signature: Uint8Array<ArrayBuffer>;
}

/**
 * Generate a fresh Ed25519 signing key for workspace `ws`; its `publicJwk` is what a key set
 * (`{ keys: [key.publicJwk] }`) publishes.
 */
export async function generateSigningKey(ws: string, kid: string): Promise<Ed25519SigningKey> {
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
  if (typeof jwk.x !== 'string')
    throw new TypeError('generateSigningKey: the runtime exported no public key');
  return {
    kid,
    privateKey: pair.privateKey,
    publicJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, use: 'sig', alg: JWS_ALG, ws },
  };
}

/** One encoder and one strict decoder for every token (neither keeps state between calls). */
const UTF8_ENCODER = new TextEncoder();
const UTF8_DECODER = new TextDecoder('utf-8', { fatal: true });

function encodeJsonPart(value: Record<string, unknown>): string {
  return base64UrlEncode(UTF8_ENCODER.encode(JSON.stringify(value)));
}

/**
 * Sign `payload` under `header` (which must carry `alg: "EdDSA"`) and return the compact JWS.
 *
 * @throws TypeError when `header.alg` is not `EdDSA`.
 */
export async function signCompactJws(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  privateKey: CryptoKey,
): Promise<string> {
  if (header.alg !== JWS_ALG) throw new TypeError('signCompactJws: header.alg must be "EdDSA"');
  const input = `${encodeJsonPart(header)}.${encodeJsonPart(payload)}`;
  const signature = new Uint8Array(
    await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, UTF8_ENCODER.encode(input)),
  );
  return `${input}.${base64UrlEncode(signature)}`;
}

function decodeJsonPart(part: string): Record<string, unknown> | undefined {
  const bytes = base64UrlDecode(part);
  if (bytes === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(UTF8_DECODER.decode(bytes));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return value as Record<string, unknown>;
}

/**
 * Split a compact JWS into header, payload and signature. Returns `undefined` for anything that
 * is not three strict base64url parts whose first two are JSON objects, for a signature that is
 * not 64 bytes, and for a token longer than {@link MAX_JWS_LENGTH}.
 */
export function parseCompactJws(token: string): ParsedCompactJws | undefined {
  if (typeof token !== 'string' || token.length > MAX_JWS_LENGTH) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [h, p, s] = parts as [string, string, string];
  const header = decodeJsonPart(h);
  const payload = decodeJsonPart(p);
  const signature = base64UrlDecode(s);
  if (header === undefined || payload === undefined || signature === undefined || signature.length !== 64) {
    return undefined;
  }
  return { header, payload, signingInput: UTF8_ENCODER.encode(`${h}.${p}`), signature };
}

/**
 * Import the public key of a JWK for verification. Only `kty: "OKP"`, `crv: "Ed25519"` and a
 * 32-byte `x` that encodes a valid point of large order are accepted (a small-order key would
 * let anyone forge signatures); other members are ignored here (the caller checks `kid`, `use`,
 * `alg` and `ws`).
 *
 * @throws TypeError when the JWK is not a usable Ed25519 public key.
 */
export async function importEd25519PublicKey(jwk: {
  kty?: unknown;
  crv?: unknown;
  x?: unknown;
}): Promise<CryptoKey> {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') {
    throw new TypeError('importEd25519PublicKey: not an Ed25519 public JWK');
  }
  const raw = base64UrlDecode(jwk.x);
  if (raw === undefined || raw.length !== 32)
    throw new TypeError('importEd25519PublicKey: x is not 32 bytes');
  if (!isUsableEd25519PublicKey(raw)) {
    throw new TypeError('importEd25519PublicKey: x is not a valid Ed25519 key of large order');
  }
  const key = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
  noteEd25519PublicKey(key, jwk.x);
  return key;
}

/**
 * True when the signature of `jws` is valid under `publicKey`. Never throws for a bad signature.
 * Checked by the runtime's own synchronous Ed25519 where there is one (`native-crypto.ts`), else
 * by WebCrypto.
 */
export async function verifyCompactJwsSignature(
  jws: ParsedCompactJws,
  publicKey: CryptoKey,
): Promise<boolean> {
  const checked = nativeEd25519Verify(publicKey, jws.signature, jws.signingInput);
  if (checked !== undefined) return checked;
  try {
    return await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, jws.signature, jws.signingInput);
  } catch {
    return false;
  }
}
