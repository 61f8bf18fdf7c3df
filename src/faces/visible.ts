/**
 * Text for a terminal or a log, with every character that could act on the terminal instead of
 * showing written as a visible escape: the C0 controls but the line feed and the tab, DEL, the C1
 * controls (U+0080–U+009F, among them the one-byte CSI U+009B), the bidirectional formatting
 * characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the line and paragraph
 * separators (U+2028, U+2029). Each becomes `\u` and four hex digits, as in JSON, so a JSON text
 * stays JSON that means the same.
 *
 * Everything `sess-mcp` prints to a terminal (the records commands, the usage text, the stderr
 * diagnostics) goes through it: a Surface title can hold any of these, and the owner reads it.
 * The HTTP handler's diagnostics carry a refused `Host` or `Origin` through {@link receivedValue}.
 * Nothing here decides whether a value may be shown at all: a secret never gets here.
 */
const ACTS_ON_TERMINAL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** Every character of a received value that is not shown as it is: {@link ACTS_ON_TERMINAL}, and the line feed and the tab. */
const NOT_SHOWN_RAW =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** How many characters (code points) of a received value a diagnostic keeps. */
export const RECEIVED_VALUE_MAX = 200;

function escaped(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with every character that could act on a terminal written as a visible `\uXXXX`. */
export function visible(text: string): string {
  return text.replace(ACTS_ON_TERMINAL, escaped);
}

/**
 * A value a request carried, made safe to put in a diagnostic: at most
 * {@link RECEIVED_VALUE_MAX} code points (a longer value is cut and ends with `…`), and every
 * control character (the line feed and the tab too), bidirectional formatting character, line or
 * paragraph separator and lone surrogate written as a visible `\uXXXX`. Only for values that are
 * not secrets, such as a refused `Host` or `Origin` header.
 */
export function receivedValue(text: string): string {
  const points = Array.from(text);
  const kept = points.length > RECEIVED_VALUE_MAX ? `${points.slice(0, RECEIVED_VALUE_MAX).join('')}…` : text;
  return kept.replace(NOT_SHOWN_RAW, escaped);
}
