/**
 * Two small text helpers the local Sess runtime and its answer page share: counting Unicode code
 * points (Sess's unit for every length limit) and escaping a JSON pointer reference token.
 *
 * Written here, on Sess's side, rather than imported from `src/core/contract/limits.ts` on purpose: the
 * runtime checks the package independently, so a counting mistake in core cannot hide behind
 * the same mistake in the runtime. It does not decide any limit itself.
 */

/** Unicode code points in `text`: an astral character (an emoji) counts 1, a lone surrogate 1. */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** One JSON pointer reference token, escaped (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
