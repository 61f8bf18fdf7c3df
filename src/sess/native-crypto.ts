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
 * caller uses WebCrypto. A native call that throws answers `undefined` too.
 */

/** The part of Node's `crypto` module used here. */
interface NativeCrypto {
  KeyObject: { from(key: CryptoKey): unknown };
  verify(algorithm: null, data: Uint8Array, key: unknown, signature: Uint8Array): boolean;
  createHash(algorithm: 'sha256'): { update(data: Uint8Array): { digest(): Uint8Array } };
}

function findNativeCrypto(): NativeCrypto | undefined {
  try {
    const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const found = host?.getBuiltinModule?.('crypto') as Partial<NativeCrypto> | undefined;
    if (
      typeof found?.verify === 'function' &&
      typeof found.createHash === 'function' &&
      typeof found.KeyObject?.from === 'function'
    ) {
      return found as NativeCrypto;
    }
  } catch {
    // No usable module: WebCrypto it is.
  }
  return undefined;
}

const native = findNativeCrypto();

/** The native key object of each WebCrypto key verified with (made once per key). */
const keyObjects = new WeakMap<CryptoKey, unknown>();

/**
 * Whether `signature` is a valid Ed25519 signature of `data` under `publicKey`, checked
 * synchronously by the runtime's own crypto; `undefined` when there is none or it failed to
 * answer (then check with WebCrypto).
 */
export function nativeEd25519Verify(
  publicKey: CryptoKey,
  signature: Uint8Array,
  data: Uint8Array,
): boolean | undefined {
  if (native === undefined) return undefined;
  try {
    let key = keyObjects.get(publicKey);
    if (key === undefined) {
      key = native.KeyObject.from(publicKey);
      keyObjects.set(publicKey, key);
    }
    return native.verify(null, data, key, signature);
  } catch {
    return undefined;
  }
}

/** SHA-256 of `data`, synchronously by the runtime's own crypto; `undefined` when there is none. */
export function nativeSha256(data: Uint8Array): Uint8Array | undefined {
  if (native === undefined) return undefined;
  try {
    return native.createHash('sha256').update(data).digest();
  } catch {
    return undefined;
  }
}
