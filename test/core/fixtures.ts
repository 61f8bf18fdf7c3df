/**
 * Valid sample arguments for the contract tests, built fresh on each call so a test can change one
 * value and expect exactly one refusal. Helpers to set a value at a path and to make strings of a
 * given length in code points (astral characters, so UTF-16 length and code points differ).
 */
import { SessMcpError } from '../../src/core/contract/errors.js';
import type { AskArgs, ToolName } from '../../src/core/contract/schemas.js';
import { parseToolArguments } from '../../src/core/contract/validate.js';
import type { Surface, SurfaceComponent } from '../../src/core/model/surface.js';

/** An astral character (U+1F600): 1 code point, 2 UTF-16 units, 4 UTF-8 bytes. */
export const EMOJI = '\u{1F600}';

/** A string of exactly `n` code points made of astral characters. */
export function astral(n: number): string {
  return EMOJI.repeat(n);
}

/** A rich valid Surface using every component and field kind. Component indexes are fixed. */
export function sampleSurface(): Surface {
  return {
    mode: 'interactive',
    title: 'Approve this commit?',
    description: 'I will commit with the message you approve.',
    source: {
      kind: 'sess_surface',
      components: [
        /* 0 */ { type: 'heading', text: 'What changed' },
        /* 1 */ { type: 'text', text: 'Two files change.\nThe greeting uses the first name.' },
        /* 2 */ {
          type: 'record',
          label: 'Files',
          fields: { 'src/greeting.js': 'Greeting now uses the first name', lines: 12, ok: true, none: null },
        },
        /* 3 */ {
          type: 'field',
          name: 'message',
          label: 'Commit message',
          description: 'Edit it if you like.',
          multiline: true,
          required: true,
          schema: { type: 'string', minLength: 1, maxLength: 2000 },
          value: 'Greet users by first name',
        },
        /* 4 */ {
          type: 'field',
          name: 'when',
          label: 'When',
          schema: { type: 'string', enum: ['now', 'later'], option_labels: { now: 'Right now' } },
          value: 'now',
        },
        /* 5 */ {
          type: 'field',
          name: 'tags',
          label: 'Tags',
          schema: {
            type: 'array',
            items: { type: 'string', enum: ['a', 'b', 'c'] },
            option_labels: { a: 'Alpha' },
            minItems: 0,
            maxItems: 2,
            uniqueItems: true,
          },
          value: ['a'],
        },
        /* 6 */ {
          type: 'field',
          name: 'count',
          label: 'Count',
          schema: { type: 'integer', minimum: 0, maximum: 10 },
          value: 3,
        },
        /* 7 */ { type: 'field', name: 'amount', label: 'Amount', schema: { type: 'number', minimum: 0.5 } },
        /* 8 */ {
          type: 'field',
          name: 'push',
          label: 'Push too?',
          schema: { type: 'boolean' },
          value: false,
        },
        /* 9 */ {
          type: 'field',
          name: 'mood',
          label: 'How sure are you?',
          schema: { type: 'integer', format: 'rating', minimum: 1, maximum: 5 },
        },
      ],
    },
    actions: [
      { id: 'approve', label: 'Approve and commit', intent: 'approve' },
      { id: 'stop', label: 'Stop', intent: 'reject' },
    ],
  };
}

/** A small valid Surface: a title and one action. */
export function minimalSurface(): Surface {
  return {
    mode: 'interactive',
    title: 'OK?',
    source: { kind: 'sess_surface', components: [] },
    actions: [{ id: 'ok', label: 'OK', intent: 'approve' }],
  };
}

/** Rich valid `sess_ask` arguments using every field kind. Field indexes are fixed. */
export function sampleAsk(): AskArgs {
  return {
    question: 'What time works for a call tomorrow?',
    details: 'A 30-minute call.',
    submit_label: 'Send',
    fields: [
      /* 0 */ {
        name: 'note',
        label: 'Note',
        description: 'Optional.',
        type: 'text',
        multiline: true,
        max: 500,
      },
      /* 1 */ {
        name: 'time',
        label: 'Best time',
        type: 'choice',
        required: true,
        options: ['Morning', { id: 'pm', label: 'Afternoon' }],
        value: 'pm',
      },
      /* 2 */ { name: 'days', label: 'Days', type: 'multi_choice', options: ['Mon', 'Tue'], min: 1, max: 2 },
      /* 3 */ { name: 'n', label: 'People', type: 'integer', min: 1, max: 9, value: 2 },
      /* 4 */ { name: 'budget', label: 'Budget', type: 'number', min: 0 },
      /* 5 */ { name: 'video', label: 'Video?', type: 'boolean', value: true },
      /* 6 */ { name: 'stars', label: 'How urgent?', type: 'rating', min: 1, max: 10 },
    ],
  };
}

/** Valid arguments for each tool. */
export function sampleArgs(tool: ToolName): Record<string, unknown> {
  switch (tool) {
    case 'sess_request':
      return { interaction: sampleSurface(), expires_in: 600 };
    case 'sess_response':
      return { handle: 'h_abc-123', revision: 1, wait_ms: 45_000 };
    case 'sess_publish':
      return {
        handle: 'h_abc-123',
        expected_revision: 1,
        response_event_id: 'evt_1',
        interaction: sampleSurface(),
      };
    case 'sess_complete':
      return { handle: 'h_abc-123', expected_revision: 1, response_event_id: 'evt_1' };
    case 'sess_ask':
      return sampleAsk() as unknown as Record<string, unknown>;
    case 'sess_list':
      // The listing arguments; `handle` stands alone (inspect), so it is not in the sample.
      return { state: 'waiting', limit: 20, cursor: 'WzEsbnVsbF0' };
    case 'sess_withdraw':
      return { handle: 'h_abc-123', expected_revision: 1, reason: 'Sorted out in chat.' };
  }
}

/** Sets `value` at `path` inside `root` (creating nothing: every parent must exist). */
export function setAt(root: unknown, path: readonly (string | number)[], value: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1]!] = value;
}

/** Deletes the value at `path`. */
export function deleteAt(root: unknown, path: readonly (string | number)[]): void {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  delete node[path[path.length - 1]!];
}

/** A deep copy through JSON (as a client would send it). */
export function viaJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The wire object of a refusal at `pointer` whose message is the pointer and `message`. */
export function pointerRefusal(pointer: string, message: string): ReturnType<SessMcpError['toObject']> {
  return { code: 'INVALID_ARGUMENTS', message: `${pointer} ${message}`, retryable: false, field: pointer };
}

/** The wire object of a refusal for a value over a limit (`limit`, `length`) at `pointer`. */
export function limitRefusal(
  pointer: string,
  message: string,
  limit: number,
  length: number,
): ReturnType<SessMcpError['toObject']> {
  return { code: 'INVALID_ARGUMENTS', message, retryable: false, field: pointer, limit, length };
}

/** The error `parseToolArguments` throws for `raw`, as its wire object; fails if it accepts. */
export function refusal(tool: ToolName, raw: unknown): ReturnType<SessMcpError['toObject']> {
  try {
    parseToolArguments(tool, raw);
  } catch (error) {
    if (error instanceof SessMcpError) return error.toObject();
    throw error;
  }
  throw new Error(`expected ${tool} to refuse the arguments`);
}

/** A yes/no field component named `f<index>`. */
export function booleanField(index: number): SurfaceComponent {
  return { type: 'field', name: `f${index}`, label: `Field ${index}`, schema: { type: 'boolean' } };
}

/** A path to a value: keys and indexes from the root. */
export type ValuePath = (string | number)[];

/** Every path to a string value inside `value`, in document order. */
export function stringPaths(value: unknown, path: ValuePath = []): ValuePath[] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((item, index) => stringPaths(item, [...path, index]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => stringPaths(item, [...path, key]));
  }
  return [];
}

/** Every path to a key of a free-form object (one whose keys the caller chooses). */
export function freeKeyPaths(value: unknown, path: ValuePath = []): ValuePath[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => freeKeyPaths(item, [...path, index]));
  if (value === null || typeof value !== 'object') return [];
  const entries = Object.entries(value);
  const own =
    path[path.length - 1] === 'fields' && !Array.isArray(value) ? entries.map(([key]) => [...path, key]) : [];
  return [...own, ...entries.flatMap(([key, item]) => freeKeyPaths(item, [...path, key]))];
}

/** Renames the key at `path` to `name`, keeping its value and place. */
export function renameKeyAt(root: unknown, path: readonly (string | number)[], name: string): void {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const old = String(path[path.length - 1]);
  const renamed = Object.fromEntries(
    Object.entries(node).map(([key, item]) => [key === old ? name : key, item]),
  );
  for (const key of Object.keys(node)) delete node[key];
  Object.assign(node, renamed);
}

/** Every path to a value inside `root`, parents first (the first is `prefix` itself). */
export function valuePaths(root: unknown, prefix: ValuePath = []): ValuePath[] {
  const out: ValuePath[] = [prefix];
  if (Array.isArray(root)) {
    for (let index = 0; index < root.length; index++)
      out.push(...valuePaths(root[index], [...prefix, index]));
  } else if (root !== null && typeof root === 'object') {
    for (const [key, value] of Object.entries(root)) out.push(...valuePaths(value, [...prefix, key]));
  }
  return out;
}

/** Where a mutation of a JSON copy of `raw` happens: the parent of `path`, its last key and value. */
export interface MutationSite {
  /** The copy, as `{ root }` so that the empty path has a parent too; return `copy.root`. */
  copy: { root: unknown };
  parent: Record<string | number, unknown>;
  last: string | number;
  target: unknown;
}

/** A JSON copy of `raw` with the parent of `path` in it, ready to change. */
export function mutationSite(raw: unknown, path: readonly (string | number)[]): MutationSite {
  const copy = viaJson({ root: raw }) as { root: unknown };
  const full = ['root', ...path];
  let parent = copy as Record<string | number, unknown>;
  for (const key of full.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = full[full.length - 1]!;
  return { copy, parent, last, target: parent[last] };
}
