/**
 * The sample Surfaces and answers every suite shares, so a test file states only what is particular
 * to it. Each is built fresh by its function where tests change it; the constants are frozen.
 *
 * Nothing here is a fixture of one suite: the contract tests' rich Surface (every component and
 * field kind, fixed component indexes) stays in `test/core/fixtures.ts`.
 */
import type {
  Answer,
  FieldComponent,
  Surface,
  SurfaceAction,
  SurfaceComponent,
} from '../../src/core/model/surface.js';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The approve/stop actions of the sample Surfaces. */
export const approveStopActions: readonly SurfaceAction[] = deepFreeze([
  { id: 'approve', label: 'Approve', intent: 'approve' },
  { id: 'stop', label: 'Stop', intent: 'reject' },
] satisfies SurfaceAction[]);

/** An interactive `sess_surface` of `components`, with its own copy of `actions` (approve/stop). */
export function surfaceOf(
  title: string,
  components: SurfaceComponent[],
  actions: readonly SurfaceAction[] = approveStopActions,
): Surface {
  return {
    mode: 'interactive',
    title,
    source: { kind: 'sess_surface', components },
    actions: actions.map((action) => ({ ...action })),
  };
}

/** The "What changed" record of the commit approval. */
export function whatChangedRecord(): SurfaceComponent {
  return { type: 'record', label: 'What changed', fields: { 'src/a.js': 'Greets by first name' } };
}

/** The editable commit-message field (`message`), required only when asked. */
export function messageField(options: { required?: boolean } = {}): FieldComponent {
  return {
    type: 'field',
    name: 'message',
    label: 'Commit message',
    multiline: true,
    ...(options.required === true ? { required: true } : {}),
    schema: { type: 'string', minLength: 1, maxLength: 2000 },
    value: 'Greet users by first name',
  };
}

/** A commit approval: a record of what changed and one required text field, two actions. */
export function approvalSurface(title = 'Approve this commit?'): Surface {
  return surfaceOf(title, [whatChangedRecord(), messageField({ required: true })]);
}

/** {@link approvalSurface} as a frozen constant. */
export const approveSurface: Surface = deepFreeze(approvalSurface());

/** A follow-up for `sess_publish`: one text, two actions. */
export const followUpSurface: Surface = deepFreeze({
  mode: 'interactive',
  title: 'Push it too?',
  source: { kind: 'sess_surface', components: [{ type: 'text', text: 'The commit is made.' }] },
  actions: [
    { id: 'push', label: 'Push', intent: 'approve' },
    { id: 'keep', label: 'Keep local', intent: 'reject' },
  ],
} satisfies Surface);

/**
 * An answer to {@link approveSurface}. Its text is distinctive on purpose: the secrets audit looks
 * for it in everything a test captures.
 */
export const approveAnswer: Answer = deepFreeze({
  action: 'approve',
  values: { message: 'Greet users by first name (edited)' },
});

/** The smallest valid Surface: one text, one action. */
export function minimalSurface(title = 'Deploy now?'): Surface {
  return {
    mode: 'interactive',
    title,
    source: { kind: 'sess_surface', components: [{ type: 'text', text: 'Release 1.2.3 is ready.' }] },
    actions: [{ id: 'go', label: 'Deploy', intent: 'approve' }],
  };
}

/**
 * The team-lunch `sess_ask` (a required day choice, Thursday or Friday, and a free-text diet
 * field), built fresh: add `respondents` to ask several people through one link.
 */
export function lunchAsk(): { question: string; fields: Array<Record<string, unknown>> } {
  return {
    question: 'Which day suits the team lunch?',
    fields: [
      {
        name: 'day',
        label: 'Day',
        type: 'choice',
        required: true,
        options: [
          { id: 'thu', label: 'Thursday' },
          { id: 'fri', label: 'Friday' },
        ],
      },
      { name: 'diet', label: 'Dietary needs', type: 'text' },
    ],
  };
}
