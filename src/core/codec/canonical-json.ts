/**
 * Canonical JSON, exactly as `docs/sess-api.md` defines it: the one writer of the package. The
 * receipt digests (`sdg`, `adg`) hash it, the local runtime's idempotency fingerprints and Surface
 * size use it, the engine digests and compares Surfaces and answers with it, and the flat input
 * schemas compare schema parts with it.
 *
 * One writer for every value: what it cannot write it refuses with a `TypeError` naming where the
 * value went wrong, found as the refusal passes back out of the containers it sits in, so a value
 * it writes pays nothing for that path.
 *
 * Pure and synchronous: no I/O, no hashing (the digests are `src/sess/digest.ts`'s and the
 * engine's), and it never puts a value into a message, only member names.
 */

/** A value canonical JSON cannot hold: what it is, and where (member names and indices). */
class Unwritable {
  /** The path from the top, `/`-separated, built as the refusal leaves each container. */
  path = '';
  constructor(readonly problem: string) {}
}

/** `error` with `key` put in front of its path, when it is a refusal of this writer. */
function within(error: unknown, key: string | number): unknown {
  if (error instanceof Unwritable) error.path = `/${key}${error.path}`;
  return error;
}

/**
 * Canonical JSON of a JSON value: object members sorted by key (UTF-16 code unit order, as
 * `Array.prototype.sort` sorts strings), no whitespace, strings and numbers written as
 * `JSON.stringify` writes them, arrays in order. Object members whose value is `undefined` are left
 * out (as `JSON.stringify` does). Objects may have a null prototype.
 *
 * `{ b: 1, a: [true, 'x'] }` is written `{"a":[true,"x"],"b":1}`.
 *
 * @throws TypeError for a value JSON cannot hold, naming where it is: a non-finite number, a
 *   bigint, a function, a symbol, `undefined` at the top or inside an array (a hole included), or
 *   an object that is not a plain object or array (a `Date`, a `Map`, a class instance); for
 *   example `canonicalJson: a non-finite number at "/a/1/b"`.
 */
export function canonicalJson(value: unknown): string {
  try {
    return write(value);
  } catch (error) {
    if (error instanceof Unwritable) {
      throw new TypeError(`canonicalJson: ${error.problem} at "${error.path}"`);
    }
    throw error;
  }
}

function write(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new Unwritable('a non-finite number');
      return JSON.stringify(value);
    case 'object':
      return Array.isArray(value) ? writeArray(value) : writeObject(value);
    default:
      throw new Unwritable(`a ${typeof value} cannot be JSON`);
  }
}

function writeArray(value: readonly unknown[]): string {
  let out = '[';
  let i = 0;
  try {
    for (; i < value.length; i++) {
      const item = value[i];
      // A hole reads as `undefined`, and JSON has neither.
      if (item === undefined) throw new Unwritable('undefined');
      out += i === 0 ? write(item) : `,${write(item)}`;
    }
  } catch (error) {
    throw within(error, i);
  }
  return `${out}]`;
}

function writeObject(value: object): string {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new Unwritable('not a plain object');
  const record = value as Record<string, unknown>;
  let out = '{';
  let key = '';
  try {
    for (key of Object.keys(record).sort()) {
      const member = record[key];
      if (member === undefined) continue;
      out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${write(member)}`;
    }
  } catch (error) {
    throw within(error, key);
  }
  return `${out}}`;
}
