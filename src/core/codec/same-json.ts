/**
 * Whether two JSON values are the same value, told without writing either as JSON: the quick
 * answer before canonical JSON is compared, used by the receipt verifier and the engine alike.
 */

/**
 * True when `a` and `b` are JSON values that canonical JSON (`codec/canonical-json.ts`) writes
 * the same way, found without writing them: members in any order, members whose value is
 * `undefined` left out, `0` and `-0` alike. False for anything it cannot tell so cheaply (a value
 * `canonicalJson` refuses, a `Date`, a class instance): the caller then writes both.
 */
export function sameJsonValue(a: unknown, b: unknown): boolean {
  if (a === null || typeof a !== 'object') {
    return a === b && (a === null || typeof a === 'boolean' || typeof a === 'string' || Number.isFinite(a));
  }
  if (typeof b !== 'object' || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (a[i] === undefined || !sameJsonValue(a[i], b[i])) return false;
    }
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  let defined = 0;
  for (const key of Object.keys(a)) {
    const member = a[key];
    if (member === undefined) continue;
    defined++;
    if (!Object.hasOwn(b, key) || !sameJsonValue(member, b[key])) return false;
  }
  for (const key of Object.keys(b)) if (b[key] !== undefined) defined--;
  return defined === 0;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
