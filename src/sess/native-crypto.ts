/**
 * The runtime's own synchronous Ed25519 check and SHA-256, where it offers them: Node (and
 * runtimes that copy its API) through `process.getBuiltinModule('crypto')`. The receipt check
 * uses them before WebCrypto because WebCrypto runs every `verify` and `digest` as a job on
 * another thread, and on a busy machine waiting for that thread and for the hop back costs
 * milliseconds, far more than the operation itself (a tenth of a millisecond). Both compute the
 * same function of the same bytes.
 *
 * Found at run time, never imported, so the Sess client still loads where there is no such module
 * (edge runtimes, Node before 20.16): there every function here answers `undefined` and the
 * caller uses WebCrypto. So does a module that gets known answers wrong (checked once, on first
 * use), and a native call that throws answers `undefined` too.
 */
import { base64UrlDecode } from '../core/codec/base64url.js';

/** The part of Node's `crypto` module used here. */
interface NativeCrypto {
  createPublicKey(input: { key: Record<string, string>; format: 'jwk' }): unknown;
  verify(algorithm: null, data: Uint8Array, key: unknown, signature: Uint8Array): boolean;
  createHash(algorithm: 'sha256'): { update(data: Uint8Array): { digest(): Uint8Array } };
}

/** RFC 8032, section 7.1, test 1: a public key and its signature of the empty message. */
const KNOWN_KEY_X = '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo';
const KNOWN_SIGNATURE =
  '5VZDAMNgrHKQhuLMgG6CioSHfx645dl02HPgZSJJAVVfuIIVkKM7rMYeOXAc-bRr0lv18FlbviRlUUFDjnoQCw';
/** SHA-256 of `abc` (FIPS 180-2). */
const KNOWN_SHA256_ABC = 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0';

/**
 * True when `found` gives the known answers: the RFC 8032 signature verifies, the same signature
 * with one bit flipped does not, and SHA-256 of `abc` is the standard's. A module that disagrees
 * (a partial copy of Node's API) is not used.
 */
function answersKnown(found: NativeCrypto): boolean {
  const key = found.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: KNOWN_KEY_X }, format: 'jwk' });
  const signature = base64UrlDecode(KNOWN_SIGNATURE)!;
  const empty = new Uint8Array(0);
  if (found.verify(null, empty, key, signature) !== true) return false;
  signature[0]! ^= 1;
  if (found.verify(null, empty, key, signature) !== false) return false;
  const abc = found.createHash('sha256').update(new TextEncoder().encode('abc')).digest();
  const expected = base64UrlDecode(KNOWN_SHA256_ABC)!;
  return abc.length === expected.length && abc.every((byte, i) => byte === expected[i]);
}

function findNativeCrypto(): NativeCrypto | undefined {
  try {
    const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const found = host?.getBuiltinModule?.('crypto') as Partial<NativeCrypto> | undefined;
    if (
      typeof found?.verify === 'function' &&
      typeof found.createHash === 'function' &&
      typeof found.createPublicKey === 'function' &&
      answersKnown(found as NativeCrypto)
    ) {
      return found as NativeCrypto;
    }
  } catch {
    // No usable module: WebCrypto it is.
  }
  return undefined;
}

/** Looked up, and checked against the known answers, on first use (not when the module loads). */
let native: NativeCrypto | undefined | null = null;
function nativeCrypto(): NativeCrypto | undefined {
  if (native === null) native = findNativeCrypto();
  return native;
}

/** The JWK `x` of each public key `importEd25519PublicKey` made, so a native key can be built. */
const publicKeyX = new WeakMap<CryptoKey, string>();
/** The native key object of each WebCrypto key verified with (made once per key). */
const keyObjects = new WeakMap<CryptoKey, unknown>();

/**
 * Remembers the public bytes (`x`, base64url) of a WebCrypto Ed25519 key as it is imported, so the
 * native check can use the same key: a non-extractable `CryptoKey` cannot be read back (and
 * Node 24 deprecates converting one), so only keys noted here take the native path.
 */
export function noteEd25519PublicKey(publicKey: CryptoKey, x: string): void {
  publicKeyX.set(publicKey, x);
}

/**
 * Whether `signature` is a valid Ed25519 signature of `data` under `publicKey`, checked
 * synchronously by the runtime's own crypto; `undefined` when there is none, the key was not
 * noted by `noteEd25519PublicKey`, or the check failed to answer (then check with WebCrypto).
 */
export function nativeEd25519Verify(
  publicKey: CryptoKey,
  signature: Uint8Array,
  data: Uint8Array,
): boolean | undefined {
  const native = nativeCrypto();
  if (native === undefined) return undefined;
  try {
    let key = keyObjects.get(publicKey);
    if (key === undefined) {
      const x = publicKeyX.get(publicKey);
      if (x === undefined) return undefined;
      key = native.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
      keyObjects.set(publicKey, key);
    }
    return native.verify(null, data, key, signature);
  } catch {
    return undefined;
  }
}

/** SHA-256 of `data`, synchronously by the runtime's own crypto; `undefined` when there is none. */
export function nativeSha256(data: Uint8Array): Uint8Array | undefined {
  const native = nativeCrypto();
  if (native === undefined) return undefined;
  try {
    return native.createHash('sha256').update(data).digest();
  } catch {
    return undefined;
  }
}
