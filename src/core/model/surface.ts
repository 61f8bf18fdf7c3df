/**
 * The Sess interactive Surface as TypeScript types: what an agent sends in `interaction` and what
 * a person answers. The valibot schemas in `schemas.ts` produce exactly these types; the page of
 * the local runtime renders them.
 *
 * Types only: no validation and no limits live here.
 */

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A string field: single- or multi-line text (`multiline` on the component). */
export interface StringFieldSchema {
  type: 'string';
  minLength?: number;
  maxLength?: number;
}

/** A number or integer field with optional bounds. */
export interface NumberFieldSchema {
  type: 'number' | 'integer';
  minimum?: number;
  maximum?: number;
}

/** A yes/no field. */
export interface BooleanFieldSchema {
  type: 'boolean';
}

/** One choice out of `enum`, shown by `option_labels` (or by the enum ID where it has none). */
export interface ChoiceFieldSchema {
  type: 'string';
  enum: string[];
  option_labels?: Record<string, string>;
}

/** Any number of choices out of `items.enum`. */
export interface MultiChoiceFieldSchema {
  type: 'array';
  items: { type: 'string'; enum: string[] };
  option_labels?: Record<string, string>;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: true;
}

/** A rating: a whole number from `minimum` to `maximum` (at most 1..10). */
export interface RatingFieldSchema {
  type: 'integer';
  format: 'rating';
  minimum: number;
  maximum: number;
}

/** The supported subset of JSON Schema for a `field` component (see `docs/tools.md`). */
export type FieldSchema =
  | StringFieldSchema
  | NumberFieldSchema
  | BooleanFieldSchema
  | ChoiceFieldSchema
  | MultiChoiceFieldSchema
  | RatingFieldSchema;

/** A short heading. */
export interface HeadingComponent {
  type: 'heading';
  text: string;
}

/** Plain paragraphs; line breaks are kept. */
export interface TextComponent {
  type: 'text';
  text: string;
}

/** A caption and a key/value list. */
export interface RecordComponent {
  type: 'record';
  label?: string;
  fields: Record<string, string | number | boolean | null>;
}

/** An input the person fills in; `value` prefills it. */
export interface FieldComponent {
  type: 'field';
  name: string;
  label: string;
  description?: string;
  multiline?: boolean;
  required?: boolean;
  schema: FieldSchema;
  value?: JsonValue;
}

/** One component of a Surface. */
export type SurfaceComponent = HeadingComponent | TextComponent | RecordComponent | FieldComponent;

/** What an action means to the agent. */
export type ActionIntent = 'submit' | 'approve' | 'reject';

/** A button at the bottom of the page. */
export interface SurfaceAction {
  id: string;
  label: string;
  intent: ActionIntent;
}

/** The interactive Surface an agent sends (`interaction`). */
export interface Surface {
  mode: 'interactive';
  title: string;
  description?: string;
  source: { kind: 'sess_surface'; components: SurfaceComponent[] };
  actions: SurfaceAction[];
}

/** What a person submitted: the action they chose and the value of every field by `name`. */
export interface Answer {
  action: string;
  values: Record<string, JsonValue>;
}
