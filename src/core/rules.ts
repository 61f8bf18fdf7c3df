/**
 * Rules for values that more than one entry accepts (engine, HTTP and stdio options, the Sess
 * client, the stores): each is defined once here, with the text its messages state, and imported
 * wherever it is checked, so every entry gives the same verdict on the same value.
 *
 * This module only states rules. It reads no environment and builds no message prefix: the option
 * helper (`options.ts`) and the stdio configuration name the option or variable.
 */

/** A rule a value must satisfy, with the words a message uses for it ("must be <text>"). */
export interface ValueRule<T> {
  /** What a valid value is, in the words every message uses. */
  readonly text: string;
  /** True when `value` satisfies the rule. */
  test(value: unknown): value is T;
}

/**
 * The longest one `sess_response` wait may last, in milliseconds. `maxWaitMs` options (and
 * `SESS_MCP_MAX_WAIT_MS`) may only lower it; the Sess wire's `timeout_ms` has the same ceiling.
 */
export const WAIT_CEILING_MS = 45_000;

/**
 * A wait bound: a whole number of milliseconds from 0 to {@link WAIT_CEILING_MS}. `0` means
 * `sess_response` never waits, for hosts whose tool calls must return at once.
 */
export const WAIT_MS_RULE: ValueRule<number> = {
  text: `a whole number of milliseconds from 0 to ${WAIT_CEILING_MS}`,
  test: (value): value is number =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= WAIT_CEILING_MS,
};

const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** A Sess id (workspace, Session, Ask): 1–128 characters of `A–Z a–z 0–9 . _ : -`. */
export const SESS_ID_RULE: ValueRule<string> = {
  text: '1 to 128 characters of A-Z a-z 0-9 . _ : -',
  test: (value): value is string => typeof value === 'string' && ID_PATTERN.test(value),
};

const PROFILE_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;

/**
 * A profile name of the file store (`SESS_MCP_PROFILE`): 1–64 of `A–Z a–z 0–9 . _ -`, not
 * starting with `.` or `-` (a leading `_` is allowed: state directories that use one stay usable).
 */
export const PROFILE_NAME_RULE: ValueRule<string> = {
  text: "1 to 64 letters, digits, '.', '_' or '-', not starting with '.' or '-'",
  test: (value): value is string => typeof value === 'string' && PROFILE_PATTERN.test(value),
};

/**
 * The directory of one profile inside a state directory: `<stateDir>/profiles/<profile>`. `join`
 * is the platform's path join (the core imports no `node:` module).
 */
export function profileDirectory(
  join: (...parts: string[]) => string,
  stateDir: string,
  profile: string,
): string {
  return join(stateDir, 'profiles', profile);
}

/**
 * Which tools a server lists (the `tools` option of `registerSessTools` and of the HTTP handler,
 * `SESS_MCP_TOOLS` for stdio): `sess-mcp-tools/6`, every tool (the default), or
 * `sess-mcp-tools/5`, only the five tools of that contract.
 */
export type ToolSet = 'sess-mcp-tools/5' | 'sess-mcp-tools/6';

/** A tool set, as every entry that takes one checks it. */
export const TOOL_SET_RULE: ValueRule<ToolSet> = {
  text: '"sess-mcp-tools/5" or "sess-mcp-tools/6"',
  test: (value): value is ToolSet => value === 'sess-mcp-tools/5' || value === 'sess-mcp-tools/6',
};

/**
 * How a server publishes each tool's `inputSchema` (the `inputSchemas` option of
 * `registerSessTools` and of the HTTP handler, `SESS_MCP_INPUT_SCHEMAS` for stdio): `exact`, the
 * schemas as generated (the default), or `flat`, the same schemas without `anyOf`/`oneOf`, for a
 * host that rewrites unions before it validates (`flattenUnions` in `flat-schema.ts`). The server
 * validates every call the same way with either.
 */
export type InputSchemas = 'exact' | 'flat';

/** An input-schema form, as every entry that takes one checks it. */
export const INPUT_SCHEMAS_RULE: ValueRule<InputSchemas> = {
  text: '"exact" or "flat"',
  test: (value): value is InputSchemas => value === 'exact' || value === 'flat',
};
