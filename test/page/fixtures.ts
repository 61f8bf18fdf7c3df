/**
 * Surfaces shared by the answer-page suites: one with every component and every field type, and
 * a follow-up. Plain data, written the way an agent would send it.
 */
import type { Answer, Surface, SurfaceAction, SurfaceComponent } from '../../src/core/model/surface.js';

/** Every component type and every field type, with bounds, help, prefilled values and labels. */
export const TRIP: Surface = {
  mode: 'interactive',
  title: 'Confirm your airport transfer',
  description: 'Check the booking and tell the driver what you need.',
  source: {
    kind: 'sess_surface',
    components: [
      { type: 'heading', text: 'Your booking' },
      { type: 'text', text: 'Pickup at arrivals.\nLook for the blue sign.\n\nThe driver waits 45 minutes.' },
      {
        type: 'record',
        label: 'Flight details',
        fields: { Flight: 'SQ 22', Passengers: 2, Paid: true, Terminal: null },
      },
      {
        type: 'field',
        name: 'full_name',
        label: 'Full name',
        description: 'As printed on your passport.',
        required: true,
        schema: { type: 'string', minLength: 2, maxLength: 20 },
      },
      {
        type: 'field',
        name: 'notes',
        label: 'Notes for the driver',
        multiline: true,
        schema: { type: 'string', maxLength: 200 },
        value: 'Ring twice\nthen wait',
      },
      {
        type: 'field',
        name: 'bags',
        label: 'Number of bags',
        required: true,
        schema: { type: 'integer', minimum: 0, maximum: 5 },
      },
      {
        type: 'field',
        name: 'tip',
        label: 'Tip in euros',
        schema: { type: 'number', minimum: 0, maximum: 50 },
      },
      { type: 'field', name: 'child_seat', label: 'Child seat', schema: { type: 'boolean' }, value: true },
      {
        type: 'field',
        name: 'car',
        label: 'Car type',
        required: true,
        schema: {
          type: 'string',
          enum: ['sedan', 'van', 'any'],
          option_labels: { sedan: 'Sedan', van: 'Minivan' },
        },
      },
      {
        type: 'field',
        name: 'extras',
        label: 'Extras',
        schema: {
          type: 'array',
          items: { type: 'string', enum: ['water', 'wifi', 'charger'] },
          option_labels: { water: 'Bottled water', wifi: 'Wi-Fi', charger: 'Phone charger' },
          minItems: 1,
          maxItems: 2,
          uniqueItems: true,
        },
      },
      {
        type: 'field',
        name: 'rating',
        label: 'How easy was booking?',
        required: true,
        schema: { type: 'integer', format: 'rating', minimum: 1, maximum: 5 },
      },
    ],
  },
  actions: [
    { id: 'confirm', label: 'Confirm', intent: 'approve' },
    { id: 'cancel', label: 'Cancel transfer', intent: 'reject' },
  ],
};

/** A valid answer to {@link TRIP} that uses every field. */
export const TRIP_ANSWER: Answer = {
  action: 'confirm',
  values: {
    full_name: 'Ana Novak',
    notes: 'Ring twice\nthen wait',
    bags: 3,
    tip: 7.5,
    child_seat: true,
    car: 'van',
    extras: ['water', 'charger'],
    rating: 4,
  },
};

/** A follow-up the agent publishes after the first answer. */
export const FOLLOW_UP: Surface = {
  mode: 'interactive',
  title: 'Pick a pickup time',
  source: {
    kind: 'sess_surface',
    components: [
      { type: 'text', text: 'Your flight lands at 14:05.' },
      {
        type: 'field',
        name: 'time',
        label: 'Pickup time',
        required: true,
        schema: {
          type: 'string',
          enum: ['1430', '1500'],
          option_labels: { '1430': '14:30', '1500': '15:00' },
        },
      },
    ],
  },
  actions: [{ id: 'ok', label: 'Book it', intent: 'submit' }],
};

/** A one-field question, as `sess_ask` would build it. */
export const SHORT_ASK: Surface = {
  mode: 'interactive',
  title: 'Which day suits you?',
  source: {
    kind: 'sess_surface',
    components: [
      {
        type: 'field',
        name: 'day',
        label: 'Day',
        required: true,
        schema: { type: 'string', enum: ['mon', 'tue'], option_labels: { mon: 'Monday', tue: 'Tuesday' } },
      },
    ],
  },
  actions: [{ id: 'submit', label: 'Send', intent: 'submit' }],
};

/** `base` with its components replaced by `components` (its title and actions stay). */
export function withComponents(base: Surface, components: SurfaceComponent[]): Surface {
  return { ...base, source: { kind: 'sess_surface', components } };
}

/**
 * A Surface with `evil` in every place a person reads text: title, description, heading,
 * paragraph, record caption, key (its first 40 code points, Sess's key limit) and value, and a
 * text field's label, help and prefilled value (named `fieldName`); then `more` components.
 */
export function hostileSurface(
  evil: string,
  options: { fieldName: string; more: SurfaceComponent[]; action: SurfaceAction },
): Surface {
  return {
    mode: 'interactive',
    title: evil,
    description: evil,
    source: {
      kind: 'sess_surface',
      components: [
        { type: 'heading', text: evil },
        { type: 'text', text: evil },
        { type: 'record', label: evil, fields: { [evil.slice(0, 40)]: evil } },
        {
          type: 'field',
          name: options.fieldName,
          label: evil,
          description: evil,
          schema: { type: 'string' },
          value: evil,
        },
        ...options.more,
      ],
    },
    actions: [options.action],
  };
}
