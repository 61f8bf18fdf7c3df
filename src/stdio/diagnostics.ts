/**
 * Diagnostics of the stdio server: one JSON line per event on stderr, holding only a fixed event
 * name and, at most, a code, a tool name, a state word, a duration and the name of a variable.
 *
 * The sink re-checks every field against a strict pattern and drops anything else, so even a
 * caller that passed a value by mistake cannot put a link, key, handle, receipt or answer on
 * stderr. It never writes to stdout, which carries the protocol only.
 */

import { visible } from '../faces/visible.js';
import { type DiagnosticEvent, type DiagnosticsSink, ERROR_TABLE } from '../index.js';

/** Where lines go: `process.stderr` fits. */
export interface LineWriterLike {
  write(chunk: string): unknown;
}

const WORD = /^[a-z][a-z0-9_.]{0,63}$/;
/** An environment variable's or an option's name: a name, never a value. */
const VARIABLE = /^(?:[A-Z][A-Z0-9_]{0,63}|[a-z][A-Za-z0-9]{0,63})$/;

/**
 * Keep only what a diagnostic line may hold. Event and state are lower-case words (`a-z`, digits,
 * `_` and `.`), the tool a `sess_*` word, the code a member of the error table, `ms` a finite
 * non-negative number rounded to whole milliseconds, `variable` an upper-case environment name or
 * a camel-case option name. An event that fails its pattern becomes
 * `invalid_event`.
 */
export function sanitizeDiagnostic(event: DiagnosticEvent): DiagnosticEvent {
  const out: DiagnosticEvent = {
    event: typeof event.event === 'string' && WORD.test(event.event) ? event.event : 'invalid_event',
  };
  if (typeof event.code === 'string' && Object.hasOwn(ERROR_TABLE, event.code)) out.code = event.code;
  if (typeof event.tool === 'string' && /^sess_[a-z]{1,20}$/.test(event.tool)) out.tool = event.tool;
  if (typeof event.state === 'string' && WORD.test(event.state)) out.state = event.state;
  if (typeof event.ms === 'number' && Number.isFinite(event.ms) && event.ms >= 0)
    out.ms = Math.round(event.ms);
  if (typeof event.variable === 'string' && VARIABLE.test(event.variable)) out.variable = event.variable;
  return out;
}

/**
 * A sink writing `{"source":"sess-mcp","event":…}` lines to `stream` (stderr by default).
 * Writing never throws: a broken stderr must not break a tool call. A `stream` without `write()`
 * is refused at construction (`TypeError`).
 *
 * @example
 * ```ts source="examples/snippets/stdio.examples.ts#createStderrDiagnostics"
 * const diagnostics = createStderrDiagnostics();
 * diagnostics({ event: 'server_started' });
 * // stderr: {"source":"sess-mcp","event":"server_started"}
 * ```
 */
export function createStderrDiagnostics(stream: LineWriterLike = process.stderr): DiagnosticsSink {
  // Checked once here, so a stream that could never be written (an option bag passed by mistake)
  // is refused at once rather than dropping every line in silence.
  if (stream === null || typeof stream !== 'object' || typeof stream.write !== 'function') {
    throw new TypeError('createStderrDiagnostics: stream must have a write() method.');
  }
  return (event) => {
    try {
      stream.write(`${visible(JSON.stringify({ source: 'sess-mcp', ...sanitizeDiagnostic(event) }))}\n`);
    } catch {
      /* stderr gone: nothing to do */
    }
  };
}
