/**
 * Sess's own checks of a Surface beyond its shape, as the local runtime applies them to
 * `interaction` in create, publish and create-Ask requests: the length limits (Unicode code
 * points), the counts, unique names and the size of the whole Surface. The first violation is
 * reported with a JSON pointer into the request body, the limit and the measured length.
 *
 * These rules are Sess's, written from `docs/sess-api.md`; the package's tool validators keep
 * their own copy on purpose (Sess is the authority on its side of the wire).
 */

import { canonicalJson } from '../../core/codec/canonical-json.js';
import type { Surface } from '../../core/model/surface.js';
import { codePoints, escapePointer } from './text.js';

/** One refused value. */
export interface SurfaceViolation {
  field: string;
  message: string;
  limit?: number;
  length?: number;
}

/** Sess's limits, in code points unless said otherwise. */
export const SESS_SURFACE_LIMITS = {
  title: 80,
  actionLabel: 24,
  fieldLabel: 60,
  optionLabel: 60,
  unlabelledEnumId: 60,
  fieldDescription: 160,
  description: 280,
  heading: 60,
  recordLabel: 200,
  recordKey: 40,
  recordValue: 200,
  text: 4000,
  maxFields: 24,
  maxActions: 5,
  /** UTF-8 bytes of the canonical JSON of the Surface. */
  maxBytes: 32_768,
} as const;

/** The first violation of Sess's Surface rules in `surface` (found at `base`), or `undefined`. */
export function checkSurfaceRules(surface: Surface, base = '/interaction'): SurfaceViolation | undefined {
  const L = SESS_SURFACE_LIMITS;
  const text = (value: string | undefined, pointer: string, limit: number): SurfaceViolation | undefined => {
    if (value === undefined) return undefined;
    const length = codePoints(value);
    if (length <= limit) return undefined;
    const message =
      pointer === `${base}/title`
        ? `The title can be at most ${limit} characters. Keep it to a short heading, about 40.`
        : `${pointer} is ${length} characters; the limit is ${limit}. Shorten it to at most ${limit} characters.`;
    return { field: pointer, message, limit, length };
  };

  const bytes = new TextEncoder().encode(canonicalJson(surface)).length;
  if (bytes > L.maxBytes) {
    return {
      field: base,
      message: `The interaction is ${bytes} bytes; the limit is ${L.maxBytes}.`,
      limit: L.maxBytes,
      length: bytes,
    };
  }
  let v =
    text(surface.title, `${base}/title`, L.title) ??
    text(surface.description, `${base}/description`, L.description);
  if (v) return v;

  const components = surface.source.components;
  const fieldCount = components.filter((c) => c.type === 'field').length;
  if (fieldCount > L.maxFields) {
    return {
      field: `${base}/source/components`,
      message: `The interaction has ${fieldCount} fields; the limit is ${L.maxFields}.`,
      limit: L.maxFields,
      length: fieldCount,
    };
  }
  const names = new Set<string>();
  for (const [i, c] of components.entries()) {
    const at = `${base}/source/components/${i}`;
    switch (c.type) {
      case 'heading':
        v = text(c.text, `${at}/text`, L.heading);
        break;
      case 'text':
        v = text(c.text, `${at}/text`, L.text);
        break;
      case 'record':
        v = text(c.label, `${at}/label`, L.recordLabel);
        for (const [key, value] of Object.entries(c.fields)) {
          if (v) break;
          const keyAt = `${at}/fields/${escapePointer(key)}`;
          const keyLength = codePoints(key);
          if (keyLength > L.recordKey) {
            v = {
              field: keyAt,
              message: `${keyAt} is a key of ${keyLength} characters; the limit is ${L.recordKey}.`,
              limit: L.recordKey,
              length: keyLength,
            };
          } else if (typeof value === 'string') v = text(value, keyAt, L.recordValue);
        }
        break;
      case 'field': {
        if (names.has(c.name))
          return { field: `${at}/name`, message: `${at}/name repeats the field name of an earlier field.` };
        names.add(c.name);
        v =
          text(c.label, `${at}/label`, L.fieldLabel) ??
          text(c.description, `${at}/description`, L.fieldDescription);
        if (v) break;
        const schema = c.schema;
        const labels = 'option_labels' in schema ? schema.option_labels : undefined;
        const ids = 'enum' in schema ? schema.enum : schema.type === 'array' ? schema.items.enum : undefined;
        if (labels) {
          for (const [id, label] of Object.entries(labels)) {
            v ??= text(label, `${at}/schema/option_labels/${escapePointer(id)}`, L.optionLabel);
          }
        }
        if (ids) {
          const enumAt = schema.type === 'array' ? `${at}/schema/items/enum` : `${at}/schema/enum`;
          for (const [j, id] of ids.entries()) {
            if (labels && Object.hasOwn(labels, id)) continue;
            v ??= text(id, `${enumAt}/${j}`, L.unlabelledEnumId);
          }
        }
        break;
      }
    }
    if (v) return v;
  }

  if (surface.actions.length > L.maxActions) {
    return {
      field: `${base}/actions`,
      message: `The interaction has ${surface.actions.length} actions; the limit is ${L.maxActions}.`,
      limit: L.maxActions,
      length: surface.actions.length,
    };
  }
  const ids = new Set<string>();
  for (const [i, action] of surface.actions.entries()) {
    if (ids.has(action.id))
      return {
        field: `${base}/actions/${i}/id`,
        message: `${base}/actions/${i}/id repeats an earlier action id.`,
      };
    ids.add(action.id);
    v = text(action.label, `${base}/actions/${i}/label`, L.actionLabel);
    if (v) return v;
  }
  return undefined;
}
