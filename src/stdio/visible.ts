/**
 * Text for a terminal, with every character that could act on the terminal instead of showing
 * written as a visible escape: the C0 controls but the line feed and the tab, DEL, the C1
 * controls (U+0080–U+009F, among them the one-byte CSI U+009B), the bidirectional formatting
 * characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the line and paragraph
 * separators (U+2028, U+2029). Each becomes `\u` and four hex digits, as in JSON, so a JSON text
 * stays JSON that means the same.
 *
 * Everything `sess-mcp` prints to a terminal (the records commands, the usage text, the stderr
 * diagnostics) goes through it: a Surface title can hold any of these, and the owner reads it.
 */
const ACTS_ON_TERMINAL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** `text` with every character that could act on a terminal written as a visible `\uXXXX`. */
export function visible(text: string): string {
  return text.replace(ACTS_ON_TERMINAL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
