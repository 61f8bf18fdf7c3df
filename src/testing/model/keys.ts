/**
 * Receipt signing keys of the local Sess runtime: one or more Ed25519 keys per workspace, the
 * newest of which signs; every listed key is published in the JWKS with its workspace (`ws`).
 * Tests rotate keys, remove old ones, and sign arbitrary claims with any key (to build foreign or
 * tampered receipts).
 *
 * Private keys never leave this module except as non-extractable `CryptoKey`s, and nothing here
 * logs.
 */
import { KeyObject, randomBytes, sign as signBytes } from 'node:crypto';
import { base64UrlEncode } from '../../core/codec/base64url.js';
import {
  type Ed25519PublicJwk,
  type Ed25519SigningKey,
  generateSigningKey,
  RECEIPT_TYP,
} from '../../sess/jws.js';

/** A key's public half and whether it is listed / signing. */
export interface LocalKeyInfo {
  kid: string;
  workspaceId: string;
  /** Listed in the JWKS. */
  published: boolean;
  /** The key new receipts of its workspace are signed with. */
  active: boolean;
  publicJwk: Ed25519PublicJwk;
}

function newKid(): string {
  return `k_${base64UrlEncode(new Uint8Array(randomBytes(9)))}`;
}

/**
 * The key store (`sess.keys`).
 *
 * @example
 * ```ts source="examples/snippets/testing.examples.ts#LocalKeys"
 * const oldKid = sess.keys.activeKid();
 * const kid = await sess.keys.rotate(); // the default workspace now signs with `kid`
 * sess.keys.remove(oldKid); // drop the old key from the JWKS
 * const jws = await sess.keys.sign(claims); // sign any claims with the active key
 * ```
 */
export class LocalKeys {
  readonly #keys = new Map<string, Ed25519SigningKey & { published: boolean; keyObject: KeyObject }>();
  readonly #active = new Map<string, string>();
  readonly #defaultWorkspace: () => string;

  /** @internal */
  constructor(defaultWorkspace: () => string) {
    this.#defaultWorkspace = defaultWorkspace;
  }

  /**
   * Generate a new key for a workspace and make it the signing key. The previous keys stay in the
   * JWKS (remove them with {@link LocalKeys.remove}). Returns the new `kid`.
   */
  async rotate(workspaceId: string = this.#defaultWorkspace()): Promise<string> {
    const key = await generateSigningKey(workspaceId, newKid());
    this.#keys.set(key.kid, { ...key, published: true, keyObject: KeyObject.from(key.privateKey) });
    this.#active.set(workspaceId, key.kid);
    return key.kid;
  }

  /**
   * Generate a key that is in no key set (never published), for "unknown key id" receipts.
   * Returns its `kid`; sign with it through {@link LocalKeys.sign}.
   */
  async createUnpublished(workspaceId: string = this.#defaultWorkspace()): Promise<string> {
    const key = await generateSigningKey(workspaceId, newKid());
    this.#keys.set(key.kid, { ...key, published: false, keyObject: KeyObject.from(key.privateKey) });
    return key.kid;
  }

  /** Take a key out of the JWKS (it can still sign through {@link LocalKeys.sign}). */
  remove(kid: string): void {
    const key = this.#keys.get(kid);
    if (key === undefined) throw new TypeError('keys.remove: no such kid');
    key.published = false;
  }

  /** The kid that signs new receipts of a workspace. */
  activeKid(workspaceId: string = this.#defaultWorkspace()): string {
    const kid = this.#active.get(workspaceId);
    if (kid === undefined) throw new TypeError('keys.activeKid: the workspace has no key');
    return kid;
  }

  /** Every key (public halves only). */
  list(workspaceId?: string): LocalKeyInfo[] {
    const out: LocalKeyInfo[] = [];
    for (const key of this.#keys.values()) {
      if (workspaceId !== undefined && key.publicJwk.ws !== workspaceId) continue;
      out.push({
        kid: key.kid,
        workspaceId: key.publicJwk.ws,
        published: key.published,
        active: this.#active.get(key.publicJwk.ws) === key.kid,
        publicJwk: { ...key.publicJwk },
      });
    }
    return out;
  }

  /** The JWKS body: every published key (of one workspace when given). */
  jwks(workspaceId?: string): { keys: Ed25519PublicJwk[] } {
    return {
      keys: this.list(workspaceId)
        .filter((k) => k.published)
        .map((k) => k.publicJwk),
    };
  }

  /**
   * Sign a receipt payload as a compact JWS with `kid` (default: the active key of the default
   * workspace). The header is `{ alg: 'EdDSA', kid, typ: 'sess-receipt+jwt' }`.
   */
  async sign(payload: Record<string, unknown>, options: { kid?: string } = {}): Promise<string> {
    return this.signSync(payload, options);
  }

  /**
   * {@link LocalKeys.sign}, synchronously (node:crypto; the same bytes as `signCompactJws` of
   * `src/sess/jws.ts`), so the runtime can sign and commit an answer without yielding.
   */
  signSync(payload: Record<string, unknown>, options: { kid?: string } = {}): string {
    const kid = options.kid ?? this.activeKid();
    const key = this.#keys.get(kid);
    if (key === undefined) throw new TypeError('keys.sign: no such kid');
    const part = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
    const input = `${part({ alg: 'EdDSA', kid, typ: RECEIPT_TYP })}.${part(payload)}`;
    return `${input}.${signBytes(null, Buffer.from(input, 'ascii'), key.keyObject).toString('base64url')}`;
  }
}
