/**
 * Hostile input for every tool (fast-check), through the engine with the real client and
 * memory store on the local runtime: arbitrary JSON and near-valid arguments (a valid sample with
 * one or two mutations: deep nesting, huge strings, astral characters and lone surrogates, unsafe
 * keys as own properties in every object, wrong types, extra and missing properties).
 *
 * Invariants for every case: no throw escapes `engine.call`; every error is a code of the table;
 * every `INVALID_ARGUMENTS` carries a syntactically valid JSON pointer whose parent exists in the
 * arguments, and nothing reached Sess or the store for it; `sess_list` never reaches Sess.
 *
 * CI runs a fixed seed with 5 000 cases per tool; `npm run fuzz` runs 100 000 per tool
 * (`FUZZ_RUNS` and `FUZZ_SEED` override both).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/contract/errors.js';
import type { SessApi } from '../../src/core/contract/ports.js';
import { TOOL_NAMES, type ToolName } from '../../src/core/contract/schemas.js';
import { minimalSurface, sampleArgs } from '../core/fixtures.js';
import { type Harness, startHarness } from '../engine/harness.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? (process.env.npm_lifecycle_event === 'fuzz' ? 100_000 : 5_000));
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_130);
const UNSAFE = ['__proto__', 'constructor', 'prototype'] as const;

let h: Harness;
/** Sess calls seen by the engine (a named spy around the real client). */
let sessCalls = 0;
const tally = { cases: 0, refused: 0, otherCodes: 0, reachedSess: 0 };

beforeAll(async () => {
  h = await startHarness({
    sess: { plan: { maxOpenSessions: 1_000_000 } },
    engine: { maxWaitMs: 1 },
    wrapSess: (real) =>
      new Proxy(real, {
        get: (target, name: keyof SessApi) => {
          const method = target[name] as (...a: unknown[]) => unknown;
          return (...args: unknown[]) => {
            sessCalls += 1;
            return method.apply(target, args);
          };
        },
      }),
  });
});
afterAll(async () => {
  console.log(
    `[reliability] fuzz: ${tally.cases} cases (${RUNS} per tool × ${TOOL_NAMES.length} tools, seed ${SEED}); ${tally.refused} refused as INVALID_ARGUMENTS with a valid pointer and nothing sent; ${tally.otherCodes} other codes; ${tally.reachedSess} valid inputs reached Sess; 0 escaped throws`,
  );
  await h?.close();
});

type Path = Array<string | number>;

/** Every path to a value inside `root` (the root itself is `[]`). */
function pathsOf(root: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(root)) {
    for (let i = 0; i < root.length; i++) pathsOf(root[i], [...prefix, i], out);
  } else if (root !== null && typeof root === 'object')
    for (const [k, v] of Object.entries(root)) pathsOf(v, [...prefix, k], out);
  return out;
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function at(root: unknown, path: Path): unknown {
  let node = root;
  for (const key of path) node = (node as Record<string | number, unknown>)?.[key];
  return node;
}

/** Replace the value at `path` (the root when `path` is empty). */
function replaceAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = at(root, path.slice(0, -1)) as Record<string | number, unknown>;
  const key = path[path.length - 1]!;
  if (Array.isArray(parent)) parent[key as number] = value;
  else defineOwn(parent, String(key), value);
  return root;
}

/** A value nested `depth` levels deep in arrays or objects. */
function nested(depth: number, asArray: boolean, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
}

const hostileString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\uD800', '\uDC00x', '\u0000', '\u202E', '\u{1F600}'.repeat(3), ' ', '', 'sess_h_'),
);
/** Strings around and beyond the largest limits (32 KiB of Surface), in ASCII and astral characters. */
const hugeString = fc.oneof(
  fc.integer({ min: 1_000, max: 40_000 }).map((n) => 'x'.repeat(n)),
  fc.integer({ min: 500, max: 10_000 }).map((n) => '\u{1F600}'.repeat(n)),
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: hostileString },
  { weight: 1, arbitrary: hugeString },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      -1,
      0,
      1.5,
      -0,
      2 ** 53,
      1e308,
      Number.MAX_SAFE_INTEGER + 2,
      true,
      null,
      [],
      {},
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 10, max: 300 }), fc.boolean())
      .map(([depth, asArray]) => nested(depth, asArray, 'deep')),
  },
);

type Mutation =
  | { op: 'replace'; pick: number; value: unknown }
  | { op: 'delete'; pick: number }
  | { op: 'extra'; pick: number; key: string; value: unknown }
  | { op: 'unsafe'; pick: number; key: (typeof UNSAFE)[number]; value: unknown };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('replace' as const), pick: fc.nat(), value: hostileValue }),
  fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('extra' as const), pick: fc.nat(), key: hostileString, value: hostileValue }),
  fc.record({
    op: fc.constant('unsafe' as const),
    pick: fc.nat(),
    key: fc.constantFrom(...UNSAFE),
    value: fc.jsonValue({ maxDepth: 1 }),
  }),
);

function mutate(root: unknown, m: Mutation): unknown {
  const paths = pathsOf(root);
  const path = paths[m.pick % paths.length]!;
  switch (m.op) {
    case 'replace':
      return replaceAt(root, path, m.value);
    case 'delete': {
      if (path.length === 0) return undefined;
      const parent = at(root, path.slice(0, -1));
      const key = path[path.length - 1]!;
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete (parent as Record<string, unknown>)[String(key)];
      return root;
    }
    case 'extra':
    case 'unsafe': {
      const objects = paths.filter((p) => {
        const v = at(root, p);
        return v !== null && typeof v === 'object' && !Array.isArray(v);
      });
      if (objects.length === 0) return root;
      defineOwn(at(root, objects[m.pick % objects.length]!) as Record<string, unknown>, m.key, m.value);
      return root;
    }
  }
}

/**
 * Valid arguments: the rich sample, or (half the time) the same with the smallest Surface; for
 * `sess_list` the listing sample or an inspect of one handle.
 */
function baseArgs(tool: ToolName, small: boolean): unknown {
  if (small && tool === 'sess_list') return { handle: 'h_abc-123' };
  const args = sampleArgs(tool);
  if (small && 'interaction' in args) args.interaction = minimalSurface();
  if (small && tool === 'sess_ask') args.fields = [{ name: 'n', label: 'N', type: 'text' }];
  return args;
}

function argsArb(tool: ToolName): fc.Arbitrary<unknown> {
  const nearValid = fc
    .tuple(fc.boolean(), fc.array(mutationArb, { minLength: 1, maxLength: 2 }))
    .map(([small, ms]) => ms.reduce<unknown>((root, m) => mutate(root, m), baseArgs(tool, small)));
  return fc.oneof(
    { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
    { weight: 6, arbitrary: nearValid },
  );
}

const POINTER = /^(\/([^~/]|~[01])*)*$/;
function tokens(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}
/** The parent of what the pointer names exists in `args` (the named member itself may be missing). */
function parentExists(args: unknown, pointer: string): boolean {
  let node = args;
  for (const token of tokens(pointer).slice(0, -1)) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, token)) return false;
    node = (node as Record<string, unknown>)[token];
  }
  return true;
}

const codes = new Set<string>(ERROR_CODES);

describe('hostile input for every tool', () => {
  it.each(TOOL_NAMES)(
    `%s: ${RUNS} cases, no escaped throw, every refusal INVALID_ARGUMENTS with a valid pointer, nothing sent`,
    async (tool) => {
      const store = h.store();
      await fc.assert(
        fc.asyncProperty(argsArb(tool), async (args) => {
          tally.cases += 1;
          const callsBefore = sessCalls;
          const unfinished = await store.countUnfinished();
          let result: Awaited<ReturnType<Harness['engine']['call']>>;
          try {
            result = await h.engine.call(tool, args);
          } catch (error) {
            throw new Error(`a throw escaped ${tool}: ${String(error)}`);
          }
          // Plain checks (vitest's expect costs more than the call under test at these counts).
          const fail = (what: string) => {
            throw new Error(`${tool}: ${what}`);
          };
          if (!(result.content.length > 0)) fail('a result without content');
          // sess_list reads local records only, whatever it is given.
          if (tool === 'sess_list' && sessCalls !== callsBefore) fail('sess_list reached Sess');
          if (result.isError !== true) {
            tally.reachedSess += sessCalls > callsBefore ? 1 : 0;
            return;
          }
          const error = (
            result.structuredContent as { error: { code: string; field?: string; reason?: string } }
          ).error;
          if (!codes.has(error.code)) fail(`unknown code ${error.code}`);
          if (error.reason === 'internal') fail('the internal fallback');
          if (error.code !== 'INVALID_ARGUMENTS') {
            tally.otherCodes += 1;
            if (sessCalls > callsBefore) tally.reachedSess += 1;
            return;
          }
          tally.refused += 1;
          const field = error.field;
          if (typeof field !== 'string' || !POINTER.test(field))
            fail(`no valid pointer: ${JSON.stringify(field)}`);
          if (!parentExists(args, field!)) fail(`pointer ${field} names nothing in the arguments`);
          if (sessCalls !== callsBefore) fail('a refused call reached Sess');
          if ((await store.countUnfinished()) !== unfinished) fail('a refused call changed the store');
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    },
    600_000,
  );
});
