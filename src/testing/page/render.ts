/**
 * Renders every state of the answer page a person opens from a Sess link: the form of a Surface
 * (every component and field type, errors inline, the person's input kept), "waiting for the
 * agent", the follow-up, "done", an expired or lapsed link (with "Ask for more time"), a
 * question the agent withdrew (with its reason), the Ask name page, a full Ask and an unknown
 * link. Server-rendered, mobile-first and accessible; the waiting page carries the one small
 * script (`live.ts`) that shows the next step in place, and a link that does the same without
 * script. Every person-visible string is escaped.
 *
 * It decides nothing: which view to show, URLs and status codes are the runtime's business.
 */
import type {
  FieldComponent,
  MultiChoiceFieldSchema,
  RatingFieldSchema,
  RecordComponent,
  Surface,
  SurfaceAction,
  SurfaceComponent,
} from '../../core/model/surface.js';
import { fieldKind, formName, hasOwn } from './fields.js';
import { documentHtml, escapeHtml as esc } from './html.js';
import { ACTION_ERROR_KEY } from './validate.js';

/** What the answer page shows. The runtime picks the view; {@link renderPage} draws it. */
export type PageView =
  /**
   * The Surface at `revision`, posting to `actionUrl`; `values`/`errors` after a refused submit.
   * With `watchUrl` the page's script asks it whether the Session reached a final state (the
   * agent withdrew the question, or it expired) and then shows that state in place; any other
   * change leaves the form and what the person typed alone.
   */
  | {
      kind: 'form';
      surface: Surface;
      revision: number;
      actionUrl: string;
      values?: Record<string, unknown>;
      errors?: Record<string, string>;
      watchUrl?: string;
    }
  /**
   * Answered; waiting for the agent to publish a follow-up or complete. `pageUrl` is the page's
   * own address (the "Check for the next step" link); with `watchUrl` the page's script asks it
   * whether the Session changed and shows the new state in place.
   */
  | { kind: 'waiting'; title: string; pageUrl: string; watchUrl?: string }
  /** Completed: the agent has the answer. */
  | { kind: 'done'; title: string }
  /** Closed or lapsed. `extendUrl` (lapsed links of 20 h or less) shows "Ask for more time". */
  | { kind: 'expired'; title: string; extendUrl?: string }
  /** The agent withdrew the question before it was answered; `reason` is the agent's note. */
  | { kind: 'withdrawn'; title: string; reason?: string }
  /** An Ask that wants the respondent's name before the form. */
  | { kind: 'ask_name'; title: string; actionUrl: string; error?: string }
  /** An Ask that reached its cap. */
  | { kind: 'ask_full'; title: string }
  /** No such link. */
  | { kind: 'not_found' };

/**
 * A whole HTML document for `view`, to be sent as `text/html; charset=utf-8` with the
 * `content-security-policy` `PAGE_CSP`. Throws a `TypeError` for a view kind it does not know.
 */
export function renderPage(view: PageView): string {
  switch (view.kind) {
    case 'form':
      return renderForm(view);
    case 'waiting':
      return documentHtml({
        title: view.title,
        live: view.watchUrl !== undefined,
        body: stateBody(
          view.title,
          'clock',
          'Thanks — your answer was sent.',
          `<p>Waiting for the agent to carry on. Their next step shows up here.</p>
<p><a class="button" href="${esc(view.pageUrl)}">Check for the next step</a></p>`,
          view.watchUrl,
        ),
      });
    case 'done':
      return documentHtml({
        title: view.title,
        body: stateBody(
          view.title,
          'check',
          'Done — the agent has your answer.',
          '<p>Thank you. You can close this page.</p>',
        ),
      });
    case 'withdrawn':
      return documentHtml({
        title: view.title,
        body: stateBody(
          view.title,
          'stop',
          'This question was withdrawn.',
          `<p>The sender took it back, so it no longer takes answers. You do not need to do anything.</p>${
            view.reason === undefined || view.reason === ''
              ? ''
              : `\n<p class="reason">Their note: <q>${esc(view.reason)}</q></p>`
          }`,
        ),
      });
    case 'expired':
      return documentHtml({
        title: view.title,
        body:
          view.extendUrl === undefined
            ? stateBody(
                view.title,
                'clock',
                'This link has expired.',
                '<p>It no longer takes answers. If you still want to answer, ask the sender for a new link.</p>',
              )
            : stateBody(
                view.title,
                'clock',
                'This link has run out of time.',
                `<p>You can still answer if you ask for more time.</p>
<form method="post" action="${esc(view.extendUrl)}" class="actions"><button type="submit">Ask for more time</button></form>`,
              ),
      });
    case 'ask_name':
      return documentHtml({ title: view.title, body: askNameBody(view) });
    case 'ask_full':
      return documentHtml({
        title: view.title,
        body: stateBody(
          view.title,
          'stop',
          'This Ask is full.',
          '<p>It already has all the answers it can take. Thank you for stopping by.</p>',
        ),
      });
    case 'not_found':
      return documentHtml({
        title: 'Link not found',
        body: stateBody(
          'Link not found',
          'question',
          'This link does not work.',
          '<p>Check that you opened the whole link, or ask the sender for a new one.</p>',
        ),
      });
    default:
      throw new TypeError(
        `renderPage: unknown view kind ${JSON.stringify((view as { kind?: unknown }).kind)}`,
      );
  }
}

/** Small inline icons: drawn, not emoji, so they look the same without an emoji font. */
const ICONS = {
  clock: '<circle cx="24" cy="24" r="19"/><path d="M24 13v11l7 5"/>',
  check: '<circle cx="24" cy="24" r="19"/><path d="M15 25l6 6 12-13"/>',
  stop: '<circle cx="24" cy="24" r="19"/><path d="M15 24h18"/>',
  question:
    '<circle cx="24" cy="24" r="19"/><path d="M19 19.5a5 5 0 1 1 7 4.6c-1.3.6-2 1.6-2 3v1.4"/><path d="M24 33.5v.5"/>',
} as const;

function icon(name: keyof typeof ICONS): string {
  return `<svg class="icon icon-${name}" aria-hidden="true" focusable="false" viewBox="0 0 48 48" width="48" height="48" fill="none" stroke="currentColor" stroke-width="3" stroke-linecap="round" stroke-linejoin="round">${ICONS[name]}</svg>`;
}

function stateBody(
  title: string,
  iconName: keyof typeof ICONS,
  status: string,
  more: string,
  watchUrl?: string,
): string {
  const watch = watchUrl === undefined ? '' : ` data-watch="${esc(watchUrl)}"`;
  return `<h1>${esc(title)}</h1>
<div class="state" role="status" aria-live="polite"${watch}>
${icon(iconName)}
<h2>${esc(status)}</h2>
${more}
</div>`;
}

function askNameBody(view: Extract<PageView, { kind: 'ask_name' }>): string {
  const invalid = view.error !== undefined;
  return `<h1>${esc(view.title)}</h1>
${invalid ? `<div class="summary" role="alert"><p>${esc(view.error!)}</p></div>\n` : ''}<form method="post" action="${esc(view.actionUrl)}" novalidate>
<div class="field${invalid ? ' invalid' : ''}">
<label for="name">Your name <span class="req">(required)</span></label>
<p class="help" id="name-help">The person who asked sees it with your answer.</p>
<input type="text" id="name" name="name" autocomplete="name" maxlength="200" required aria-describedby="name-help${invalid ? ' name-err' : ''}"${invalid ? ' aria-invalid="true"' : ''}>
${invalid ? `<p class="error" id="name-err">${esc(view.error!)}</p>\n` : ''}</div>
<div class="actions"><button type="submit">Continue</button></div>
</form>`;
}

// ---------------------------------------------------------------------------------------------
// The form

type FormView = Extract<PageView, { kind: 'form' }>;

interface FieldContext {
  id: string;
  field: FieldComponent;
  value: unknown;
  error: string | undefined;
}

function renderForm(view: FormView): string {
  const { surface } = view;
  const errors = view.errors ?? {};
  const errorKeys = Object.keys(errors);
  const fieldIds = new Map<string, string>();
  surface.source.components.forEach((c, i) => {
    if (c.type === 'field' && !fieldIds.has(c.name)) fieldIds.set(c.name, `f${i}`);
  });
  const fieldLabels = new Map(
    surface.source.components
      .filter((c): c is FieldComponent => c.type === 'field')
      .map((c) => [c.name, c.label] as const),
  );

  const parts: string[] = [`<h1>${esc(surface.title)}</h1>`];
  if (surface.description) parts.push(`<p class="lead">${esc(surface.description)}</p>`);
  if (errorKeys.length > 0) parts.push(errorSummary(errors, errorKeys, fieldIds, fieldLabels));
  parts.push(`<form method="post" action="${esc(view.actionUrl)}" novalidate>`);
  parts.push(`<input type="hidden" name="_revision" value="${esc(String(view.revision))}">`);
  surface.source.components.forEach((component, i) => {
    parts.push(renderComponent(component, i, view, errors));
  });
  parts.push(
    renderActions(surface.actions, hasOwn(errors, ACTION_ERROR_KEY) ? errors[ACTION_ERROR_KEY] : undefined),
  );
  parts.push('</form>');
  // The page's own address is a bearer capability (for an Ask, the respondent's own page).
  parts.push('<p class="muted">Anyone with the address of this page can answer it. Keep it to yourself.</p>');
  // The watch of an open form: only a final state replaces it (`data-watch-final`, `live.ts`).
  if (view.watchUrl !== undefined)
    parts.push(`<div hidden data-watch="${esc(view.watchUrl)}" data-watch-final></div>`);
  return documentHtml({ title: surface.title, live: view.watchUrl !== undefined, body: parts.join('\n') });
}

function errorSummary(
  errors: Record<string, string>,
  keys: string[],
  fieldIds: Map<string, string>,
  fieldLabels: Map<string, string>,
): string {
  const items = keys.map((key) => {
    const message = errors[key]!;
    if (key === ACTION_ERROR_KEY) return `<li><a href="#actions">${esc(message)}</a></li>`;
    const id = fieldIds.get(key);
    if (id !== undefined) {
      const label = fieldLabels.get(key) ?? key;
      // "How was it?: …" reads badly; a label that ends in punctuation needs no colon.
      const joined = /[?!:.]$/.test(label) ? `${label} ${message}` : `${label}: ${message}`;
      return `<li><a href="#${id}">${esc(joined)}</a></li>`;
    }
    return `<li>${esc(message)}</li>`;
  });
  const count = keys.length;
  // tabindex + autofocus move focus to the summary on load, so it is read first (no script).
  return `<div class="summary" role="alert" aria-labelledby="summary-title" tabindex="-1" autofocus>
<h2 id="summary-title">${count === 1 ? 'Please check one thing' : `Please check ${count} things`}</h2>
<ul>
${items.join('\n')}
</ul>
</div>`;
}

function renderComponent(
  component: SurfaceComponent,
  index: number,
  view: FormView,
  errors: Record<string, string>,
): string {
  switch (component.type) {
    case 'heading':
      return `<h2>${esc(component.text)}</h2>`;
    case 'text':
      return component.text
        .split(/\n[ \t]*\n+/)
        .filter((p) => p.trim() !== '')
        .map((p) => `<p class="text">${esc(p)}</p>`)
        .join('\n');
    case 'record':
      return renderRecord(component);
    case 'field': {
      const value =
        view.values === undefined
          ? component.value
          : hasOwn(view.values, component.name)
            ? view.values[component.name]
            : undefined;
      return renderField({
        id: `f${index}`,
        field: component,
        value,
        error: hasOwn(errors, component.name) ? errors[component.name] : undefined,
      });
    }
  }
}

function recordValue(value: string | number | boolean | null): string {
  if (value === null) return '—';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  return String(value);
}

function renderRecord(component: RecordComponent): string {
  const rows = Object.entries(component.fields).map(
    ([key, value]) => `<div><dt>${esc(key)}</dt><dd>${esc(recordValue(value))}</dd></div>`,
  );
  const caption = component.label ? `<p class="caption">${esc(component.label)}</p>\n` : '';
  return `<section class="record">
${caption}<dl>
${rows.join('\n')}
</dl>
</section>`;
}

function describedBy(ctx: FieldContext): string {
  const ids: string[] = [];
  if (ctx.field.description) ids.push(`${ctx.id}-help`);
  if (ctx.error !== undefined) ids.push(`${ctx.id}-err`);
  return ids.length > 0 ? ` aria-describedby="${ids.join(' ')}"` : '';
}

function helpHtml(ctx: FieldContext): string {
  return ctx.field.description
    ? `<p class="help" id="${ctx.id}-help">${esc(ctx.field.description)}</p>\n`
    : '';
}

function errorHtml(ctx: FieldContext): string {
  return ctx.error !== undefined ? `<p class="error" id="${ctx.id}-err">${esc(ctx.error)}</p>\n` : '';
}

function labelText(field: FieldComponent, marker = true): string {
  return `${esc(field.label)}${field.required && marker ? ' <span class="req">(required)</span>' : ''}`;
}

function textValue(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : String(value);
}

function renderField(ctx: FieldContext): string {
  const { field, id } = ctx;
  const name = esc(formName(field));
  const invalid = ctx.error !== undefined;
  const wrapClass = `field${invalid ? ' invalid' : ''}`;
  const aria = `${describedBy(ctx)}${invalid ? ' aria-invalid="true"' : ''}${field.required ? ' required' : ''}`;
  const kind = fieldKind(field.schema, field.multiline);

  switch (kind) {
    case 'text':
    case 'textarea':
    case 'number':
    case 'integer': {
      let control: string;
      const value = esc(textValue(ctx.value));
      if (kind === 'textarea') {
        // The HTML parser drops one newline right after <textarea>; add one so a value that
        // starts with a line break keeps it.
        const raw = textValue(ctx.value);
        control = `<textarea id="${id}" name="${name}" rows="6"${aria}>${raw.startsWith('\n') ? '\n' : ''}${value}</textarea>`;
      } else if (kind === 'text') {
        control = `<input type="text" id="${id}" name="${name}" value="${value}"${aria}>`;
      } else {
        const schema = field.schema as { minimum?: number; maximum?: number };
        const bounds = `${schema.minimum !== undefined ? ` min="${schema.minimum}"` : ''}${schema.maximum !== undefined ? ` max="${schema.maximum}"` : ''}`;
        const step = kind === 'integer' ? '1' : 'any';
        const mode = kind === 'integer' ? 'numeric' : 'decimal';
        control = `<input type="number" id="${id}" name="${name}" value="${value}" step="${step}" inputmode="${mode}"${bounds}${aria}>`;
      }
      return `<div class="${wrapClass}">
<label for="${id}">${labelText(field)}</label>
${helpHtml(ctx)}${control}
${errorHtml(ctx)}</div>`;
    }
    case 'boolean': {
      // Unticked is an answer too (false), so a required checkbox carries no marker.
      const checked = ctx.value === true ? ' checked' : '';
      return `<div class="${wrapClass}">
<div class="opt"><input type="checkbox" id="${id}" name="${name}" value="true"${checked}${describedBy(ctx)}${invalid ? ' aria-invalid="true"' : ''}><label for="${id}">${labelText(field, false)}</label></div>
${helpHtml(ctx)}${errorHtml(ctx)}</div>`;
    }
    case 'choice':
    case 'multi_choice':
    case 'rating': {
      const options = optionsOf(ctx, kind);
      const type = kind === 'multi_choice' ? 'checkbox' : 'radio';
      const inputs = options.map((o, j) => {
        const oid = `${id}-${j}`;
        const aria = o.ariaLabel === undefined ? '' : ` aria-label="${esc(o.ariaLabel)}"`;
        return `<div class="opt"><input type="${type}" id="${oid}" name="${name}" value="${esc(o.value)}"${o.checked ? ' checked' : ''}${aria}><label for="${oid}">${esc(o.label)}</label></div>`;
      });
      const groupClass = kind === 'rating' ? 'rating' : 'options';
      return `<fieldset class="${wrapClass}" id="${id}"${describedBy(ctx)}${invalid ? ' aria-invalid="true"' : ''}>
<legend>${labelText(field)}</legend>
${helpHtml(ctx)}<div class="${groupClass}">
${inputs.join('\n')}
</div>
${errorHtml(ctx)}</fieldset>`;
    }
  }
}

interface OptionView {
  value: string;
  label: string;
  checked: boolean;
  ariaLabel?: string;
}

function optionsOf(ctx: FieldContext, kind: 'choice' | 'multi_choice' | 'rating'): OptionView[] {
  const { field, value } = ctx;
  if (kind === 'rating') {
    const schema = field.schema as RatingFieldSchema;
    const out: OptionView[] = [];
    for (let n = schema.minimum; n <= schema.maximum; n++) {
      out.push({
        value: String(n),
        label: String(n),
        checked: value !== undefined && value !== null && String(value) === String(n),
        ariaLabel: `${n} of ${schema.maximum}`,
      });
    }
    return out;
  }
  const schema = field.schema as {
    enum?: string[];
    items?: { enum: string[] };
    option_labels?: Record<string, string>;
  };
  const ids = kind === 'multi_choice' ? (schema as MultiChoiceFieldSchema).items.enum : (schema.enum ?? []);
  const chosen = kind === 'multi_choice' ? (Array.isArray(value) ? value : []) : [value];
  return ids.map((optionId) => ({
    value: optionId,
    label: hasOwn(schema.option_labels, optionId) ? schema.option_labels![optionId]! : optionId,
    checked: chosen.includes(optionId),
  }));
}

function renderActions(actions: SurfaceAction[], error: string | undefined): string {
  const describe = error !== undefined ? ' aria-describedby="actions-err"' : '';
  const buttons = actions.map((a) => {
    const cls = a.intent === 'reject' ? ' class="reject"' : '';
    return `<button type="submit" name="_action" value="${esc(a.id)}"${cls}${describe}>${esc(a.label)}</button>`;
  });
  return `<div class="actions" id="actions">
${error !== undefined ? `<p class="error" id="actions-err">${esc(error)}</p>\n` : ''}${buttons.join('\n')}
</div>`;
}
