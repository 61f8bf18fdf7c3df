/**
 * Whether 32 bytes are an Ed25519 public key a verifier may trust: a canonical encoding (RFC 8032,
 * 5.1.3) of a point on the curve that is not of small order. A small-order key (one of the eight
 * points of order 1, 2, 4 or 8) lets anyone make signatures that lax verifiers accept for any
 * message, so a key set that lists one must not make it usable.
 *
 * Plain `bigint` arithmetic, no `node:` module. It runs once per key of a fetched key set, never
 * per receipt, so it favours clarity over speed. It does not verify signatures (WebCrypto does).
 */

const P = (1n << 255n) - 19n;
const D = mod(-121665n * inverse(121666n));
/** √−1 mod p. */
const SQRT_M1 = power(2n, (P - 1n) / 4n);

function mod(a: bigint): bigint {
  const r = a % P;
  return r >= 0n ? r : r + P;
}

function power(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return result;
}

function inverse(a: bigint): bigint {
  return power(a, P - 2n);
}

interface Point {
  x: bigint;
  y: bigint;
}

/** Decode a point (RFC 8032, 5.1.3), or `undefined` for a non-canonical or off-curve encoding. */
function decodePoint(bytes: Uint8Array): Point | undefined {
  if (bytes.length !== 32) return undefined;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(bytes[i]!);
  const sign = y >> 255n;
  y &= (1n << 255n) - 1n;
  if (y >= P) return undefined;
  const yy = (y * y) % P;
  const u = mod(yy - 1n);
  const v = mod(D * yy + 1n);
  // x = u·v³·(u·v⁷)^((p−5)/8), then fix it up by √−1 if needed.
  const v3 = (v * v * v) % P;
  let x = (u * v3 * power(u * v3 * v3 * v, (P - 5n) / 8n)) % P;
  const check = mod(v * x * x);
  if (check === mod(-u)) x = (x * SQRT_M1) % P;
  else if (check !== u) return undefined;
  if (x === 0n && sign === 1n) return undefined;
  if ((x & 1n) !== sign) x = P - x;
  return { x, y };
}

/** Point addition; the twisted Edwards formula is complete on this curve (no exceptional cases). */
function add(a: Point, b: Point): Point {
  const t = mod(D * a.x * b.x * a.y * b.y);
  return {
    x: mod((a.x * b.y + a.y * b.x) * inverse(1n + t)),
    y: mod((a.y * b.y + a.x * b.x) * inverse(mod(1n - t))),
  };
}

/**
 * True when `bytes` encode a valid Ed25519 public key: canonical, on the curve, and not of small
 * order (8·A is not the identity). Thirty-two zero bytes are refused: y = 0 is a point of order 4.
 */
export function isUsableEd25519PublicKey(bytes: Uint8Array): boolean {
  const point = decodePoint(bytes);
  if (point === undefined) return false;
  let eight = point;
  for (let i = 0; i < 3; i++) eight = add(eight, eight);
  return !(eight.x === 0n && eight.y === 1n);
}
