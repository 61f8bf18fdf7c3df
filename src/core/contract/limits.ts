/**
 * Every number the tool contract of `sess-mcp-tools/6` refuses beyond: the "Keep it short" length
 * limits (in Unicode code points), the structural limits (depth, size, counts) and the numeric
 * ranges of tool arguments, plus the small measuring helpers they need.
 *
 * This module only names and measures. It does not validate anything (see `validate.ts`) and it
 * holds no messages except the two length messages Sess itself uses.
 */
import { MAX_ID_LENGTH, WAIT_CEILING_MS } from './rules.js';

/** Length limits of person-read text, in Unicode code points (an emoji counts 1). */
export const TEXT_LIMITS = {
  /** Surface `title` and `sess_ask` `question`: a question or a task, about 40. */
  title: 80,
  /** Action `label` and `sess_ask` `submit_label`: a verb, 1–3 words. */
  buttonLabel: 24,
  /** Field `label`. */
  fieldLabel: 60,
  /** An `option_labels` value or a `sess_ask` option label. */
  optionLabel: 60,
  /** A choice ID shown as-is because it has no `option_labels` entry. */
  unlabelledEnumId: 60,
  /** Field `description` (help): one hint. */
  help: 160,
  /** Surface `description` under the title: one or two sentences. */
  description: 280,
  /** A `heading` component's `text`. */
  heading: 60,
  /** A `record` component's `label` (caption). */
  recordCaption: 200,
  /** A key of a `record` component's `fields`. */
  recordKey: 40,
  /** A string value of a `record` component's `fields`. */
  recordValue: 200,
  /** A `text` component's `text`. */
  text: 4000,
  /** `sess_ask` `details`. */
  details: 4000,
  /** `sess_withdraw` `reason`: what the withdrawn page shows, one short sentence. */
  withdrawReason: 160,
} as const;

/** Structural limits of tool arguments. */
export const STRUCTURE_LIMITS = {
  /**
   * Deepest allowed nesting of objects and arrays. The arguments object is level 1; each object or
   * array inside it is one level deeper than its container; strings, numbers, booleans and null add
   * no level.
   */
  maxDepth: 8,
  /** Largest `interaction` (or the Surface built by `sess_ask`): UTF-8 bytes of its compact JSON. */
  maxInteractionBytes: 32_768,
  /** Most `field` components in one Surface. */
  maxFields: 24,
  /** Most actions in one Surface. */
  maxActions: 5,
  /** Fewest actions in one Surface. */
  minActions: 1,
  /** Fewest `sess_ask` fields. */
  minAskFields: 1,
  /** Most `sess_ask` fields. */
  maxAskFields: 12,
} as const;

/** Numeric ranges of tool arguments. */
export const ARGUMENT_LIMITS = {
  /** Shortest `expires_in` (and Ask `expires_in`, `respondent_expires_in`), in whole seconds. */
  minExpiresIn: 30,
  /** Longest `wait_ms` of `sess_response`, in milliseconds: the one wait ceiling (`rules.ts`). */
  maxWaitMs: WAIT_CEILING_MS,
  /** Smallest revision (`revision`, `expected_revision`). */
  minRevision: 1,
  /** Smallest `respondents.max`. */
  minRespondents: 1,
  /** Lowest rating bound. */
  minRating: 0,
  /** Highest rating bound. */
  maxRating: 10,
  /** Longest handle or `response_event_id`, in characters (`[A-Za-z0-9._:-]`): the Sess id length (`rules.ts`). */
  maxIdLength: MAX_ID_LENGTH,
  /** Longest field `name` or action `id`, in characters (`[A-Za-z0-9_.-]`). */
  maxNameLength: 64,
  /** Most items of one `sess_list` page (`limit`). */
  maxListLimit: 100,
  /** Items of one `sess_list` page when `limit` is left out. */
  defaultListLimit: 20,
  /** Longest `sess_list` `cursor`, in characters (base64url). */
  maxCursorLength: 1024,
} as const;

/** Keys refused anywhere in tool arguments, including inside free-form values. */
export const UNSAFE_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** True when `key` is one of {@link UNSAFE_KEYS}. */
export function isUnsafeKey(key: string): boolean {
  return UNSAFE_KEYS.includes(key);
}

/**
 * Names refused as a field `name` or an action `id`: the unsafe keys and every member name of
 * `Object.prototype`. A field name becomes a key of the answer's `values`, and a value keyed by
 * one of these is dropped or misread by ordinary JavaScript object handling, so a genuine answer
 * could never match its receipt. Fixed here, so every runtime gives the same verdict.
 */
export const RESERVED_NAMES: readonly string[] = [
  ...UNSAFE_KEYS,
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'toString',
  'valueOf',
];

/** True when `name` is one of {@link RESERVED_NAMES}. */
export function isReservedName(name: string): boolean {
  return RESERVED_NAMES.includes(name);
}

/** The message of a reserved name (after its pointer). */
export const RESERVED_NAME_MESSAGE =
  'is a name JavaScript objects reserve ("__proto__", "constructor", "prototype", "toString" and the other Object.prototype names); choose another name';

/** What a string of tool arguments can hold that no store or answer page can carry faithfully. */
export type TextProblem = 'nul' | 'lone_surrogate';

/** The words a message uses for each {@link TextProblem} (after the pointer). */
export const TEXT_PROBLEM_MESSAGES: Readonly<Record<TextProblem, string>> = {
  nul: 'must not contain U+0000',
  lone_surrogate: 'must not contain an unpaired surrogate',
};

/**
 * The first problem of `text`: U+0000, or a UTF-16 surrogate without its pair (which no UTF-8
 * store or JSON parser round-trips). Astral characters (a correct pair) are fine.
 */
export function textProblem(text: string): TextProblem | undefined {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return 'nul';
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit <= 0xdbff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    return 'lone_surrogate';
  }
  return undefined;
}

/** Unicode code points in `text`: an astral character (an emoji) counts 1, a lone surrogate 1. */
export function codePointLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/** UTF-8 bytes of `text` as a well-formed encoder writes it (a lone surrogate becomes U+FFFD, 3 bytes). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** UTF-8 bytes of the compact JSON of `value` (`JSON.stringify` without spacing). */
export function jsonByteLength(value: unknown): number {
  const json = JSON.stringify(value);
  return json === undefined ? 0 : utf8ByteLength(json);
}

/** Sess's message for a title over {@link TEXT_LIMITS.title}. */
export const TITLE_TOO_LONG_MESSAGE = `The title can be at most ${TEXT_LIMITS.title} characters. Keep it to a short heading, about 40.`;

/** Sess's message for any other value over its length limit. */
export function tooLongMessage(pointer: string, length: number, limit: number): string {
  return `${pointer} is ${length} characters; the limit is ${limit}. Shorten it to at most ${limit} characters.`;
}
