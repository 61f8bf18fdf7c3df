/**
 * The pure mapping from `sess_ask` arguments to an ordinary interactive Surface: the question is
 * the title, `details` a text block, each ask field a `field` component, and one submit action.
 *
 * This module only maps. It checks nothing: `askToSurface` in `validate.ts` maps with
 * {@link buildAskSurface} and then checks the result by the same rules as `sess_request`.
 */
import type { AskArgs, AskField, AskOption } from '../contract/schemas.js';
import type { FieldComponent, FieldSchema, Surface, SurfaceComponent } from './surface.js';

/** The submit button's label when `submit_label` is not given. */
export const DEFAULT_SUBMIT_LABEL = 'Send';

/** The ID of the one action of a Surface built from `sess_ask`. */
export const ASK_SUBMIT_ACTION_ID = 'submit';

/** The range of a `rating` ask field without `min` / `max`. */
export const DEFAULT_RATING = { min: 1, max: 5 } as const;

/** The ID an option carries in the answer. */
export function askOptionId(option: AskOption): string {
  return typeof option === 'string' ? option : option.id;
}

/** The label an option shows. */
export function askOptionLabel(option: AskOption): string {
  return typeof option === 'string' ? option : option.label;
}

function choices(options: AskOption[]): { enum: string[]; option_labels?: Record<string, string> } {
  const ids = options.map(askOptionId);
  const labels: Record<string, string> = {};
  let labelled = false;
  for (const option of options) {
    if (typeof option !== 'string') {
      // An object option always gets a label entry, so a long ID with a short label is fine.
      labels[option.id] = option.label;
      labelled = true;
    }
  }
  return labelled ? { enum: ids, option_labels: labels } : { enum: ids };
}

/** The field `schema` an ask field maps to. */
export function askFieldSchema(field: AskField): FieldSchema {
  switch (field.type) {
    case 'text': {
      const schema: FieldSchema = { type: 'string' };
      if (field.min !== undefined) schema.minLength = field.min;
      if (field.max !== undefined) schema.maxLength = field.max;
      return schema;
    }
    case 'number':
    case 'integer': {
      const schema: FieldSchema = { type: field.type };
      if (field.min !== undefined) schema.minimum = field.min;
      if (field.max !== undefined) schema.maximum = field.max;
      return schema;
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'choice':
      return { type: 'string', ...choices(field.options) };
    case 'multi_choice': {
      const { enum: ids, option_labels } = choices(field.options);
      const schema: FieldSchema = { type: 'array', items: { type: 'string', enum: ids }, uniqueItems: true };
      if (option_labels !== undefined) schema.option_labels = option_labels;
      if (field.min !== undefined) schema.minItems = field.min;
      if (field.max !== undefined) schema.maxItems = field.max;
      return schema;
    }
    case 'rating':
      return {
        type: 'integer',
        format: 'rating',
        minimum: field.min ?? DEFAULT_RATING.min,
        maximum: field.max ?? DEFAULT_RATING.max,
      };
  }
}

/** The `field` component an ask field maps to. */
export function askFieldComponent(field: AskField): FieldComponent {
  const component: FieldComponent = {
    type: 'field',
    name: field.name,
    label: field.label,
    schema: askFieldSchema(field),
  };
  if (field.description !== undefined) component.description = field.description;
  if (field.type === 'text' && field.multiline !== undefined) component.multiline = field.multiline;
  if (field.required !== undefined) component.required = field.required;
  if (field.value !== undefined) component.value = field.value;
  return component;
}

/** Maps `sess_ask` arguments to a Surface without checking it. */
export function buildAskSurface(args: AskArgs): Surface {
  const components: SurfaceComponent[] = [];
  if (args.details !== undefined && args.details !== '')
    components.push({ type: 'text', text: args.details });
  for (const field of args.fields) components.push(askFieldComponent(field));
  return {
    mode: 'interactive',
    title: args.question,
    source: { kind: 'sess_surface', components },
    actions: [
      { id: ASK_SUBMIT_ACTION_ID, label: args.submit_label ?? DEFAULT_SUBMIT_LABEL, intent: 'submit' },
    ],
  };
}
