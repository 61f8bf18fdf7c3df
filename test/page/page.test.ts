/**
 * Unit tests of the answer page: rendering of every component, field type and state, the
 * accessibility wiring (labels, fieldsets, error links), escaping, the form encoding both ways,
 * and every validation rule with its message.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldComponent } from '../../src/core/model/surface.js';
import {
  answerToForm,
  formToAnswer,
  LIVE_SCRIPT,
  PAGE_CSP,
  type PageView,
  renderPage,
  validateAnswer,
} from '../../src/testing/page/index.js';
import { FOLLOW_UP, hostileSurface, TRIP, TRIP_ANSWER, withComponents } from './fixtures.js';
import { byId, decode, innerText, type Tag, tags } from './html-scan.js';
import { examplePageHandler, exampleSubmit } from './one-session-mount.js';

const formView = (extra: Partial<Extract<PageView, { kind: 'form' }>> = {}): PageView => ({
  kind: 'form',
  surface: TRIP,
  revision: 1,
  actionUrl: '/s/abc',
  ...extra,
});

/** The control a `<label for>` points at, found by the label's visible text. */
function controlByLabel(html: string, list: Tag[], text: string): Tag {
  const labels = list.filter((t) => t.name === 'label' && innerText(html, t).trim().startsWith(text));
  if (labels.length !== 1) throw new Error(`expected one label "${text}", found ${labels.length}`);
  return byId(list, labels[0]!.attrs.for!);
}

/** The fieldset whose legend starts with `text`, and the inputs inside it. */
function group(html: string, list: Tag[], text: string): { fieldset: Tag; inputs: Tag[] } {
  const legend = list.find((t) => t.name === 'legend' && innerText(html, t).trim().startsWith(text));
  if (!legend) throw new Error(`no legend "${text}"`);
  const fieldset = [...list].reverse().find((t) => t.name === 'fieldset' && t.at < legend.at)!;
  const end = html.indexOf('</fieldset>', legend.at);
  const inputs = list.filter((t) => t.name === 'input' && t.at > legend.at && t.at < end);
  return { fieldset, inputs };
}

describe('renderPage: the form', () => {
  const html = renderPage(formView());
  const list = tags(html);

  it('is a whole, self-contained, mobile-first HTML document', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(list.find((t) => t.name === 'html')?.attrs.lang).toBe('en');
    expect(list.some((t) => t.name === 'meta' && t.attrs.charset === 'utf-8')).toBe(true);
    const viewport = list.find((t) => t.name === 'meta' && t.attrs.name === 'viewport');
    expect(viewport?.attrs.content).toContain('width=device-width');
    expect(innerText(html, list.find((t) => t.name === 'title')!)).toBe(TRIP.title);
    // No script and no external asset of any kind.
    expect(html).not.toMatch(/<script/i);
    expect(list.filter((t) => t.attrs.src !== undefined || t.name === 'link')).toEqual([]);
    expect(html).not.toMatch(/https?:\/\//);
    const csp = list.find((t) => t.name === 'meta' && t.attrs['http-equiv'] === 'Content-Security-Policy');
    expect(csp?.attrs.content).toContain("default-src 'none'");
    expect(list.find((t) => t.name === 'meta' && t.attrs.name === 'referrer')?.attrs.content).toBe(
      'no-referrer',
    );
  });

  it('shows the title, description, heading, text paragraphs with line breaks, and the record', () => {
    expect(innerText(html, list.find((t) => t.name === 'h1')!)).toBe(TRIP.title);
    expect(html).toContain('<p class="lead">Check the booking and tell the driver what you need.</p>');
    expect(list.filter((t) => t.name === 'h2').map((t) => innerText(html, t))).toContain('Your booking');
    const paragraphs = list
      .filter((t) => t.name === 'p' && t.attrs.class === 'text')
      .map((t) => innerText(html, t));
    expect(paragraphs).toEqual([
      'Pickup at arrivals.\nLook for the blue sign.',
      'The driver waits 45 minutes.',
    ]);
    const caption = list.find((t) => t.attrs.class === 'caption')!;
    expect(innerText(html, caption)).toBe('Flight details');
    const dts = list.filter((t) => t.name === 'dt').map((t) => innerText(html, t));
    const dds = list.filter((t) => t.name === 'dd').map((t) => innerText(html, t));
    expect(dts).toEqual(['Flight', 'Passengers', 'Paid', 'Terminal']);
    expect(dds).toEqual(['SQ 22', '2', 'Yes', '—']);
  });

  it('renders each field type as its control, found by its label, with the prefilled value', () => {
    const name = controlByLabel(html, list, 'Full name');
    expect(name).toMatchObject({ name: 'input', attrs: { type: 'text', name: 'v:full_name', value: '' } });
    expect(name.attrs.required).toBe('');
    const notes = controlByLabel(html, list, 'Notes for the driver');
    expect(notes.name).toBe('textarea');
    expect(notes.attrs.name).toBe('v:notes');
    expect(innerText(html, notes)).toBe('Ring twice\nthen wait');
    expect(controlByLabel(html, list, 'Number of bags').attrs).toMatchObject({
      type: 'number',
      step: '1',
      min: '0',
      max: '5',
      name: 'v:bags',
    });
    expect(controlByLabel(html, list, 'Tip in euros').attrs).toMatchObject({
      type: 'number',
      step: 'any',
      name: 'v:tip',
    });
    expect(controlByLabel(html, list, 'Child seat').attrs).toMatchObject({
      type: 'checkbox',
      name: 'v:child_seat',
      value: 'true',
      checked: '',
    });

    const car = group(html, list, 'Car type');
    expect(car.inputs.map((t) => [t.attrs.type, t.attrs.name, t.attrs.value])).toEqual([
      ['radio', 'v:car', 'sedan'],
      ['radio', 'v:car', 'van'],
      ['radio', 'v:car', 'any'],
    ]);
    // Options show their label, or the enum ID where there is none.
    expect(['Sedan', 'Minivan', 'any'].map((l) => controlByLabel(html, list, l).attrs.value)).toEqual([
      'sedan',
      'van',
      'any',
    ]);

    const extras = group(html, list, 'Extras');
    expect(extras.inputs.map((t) => [t.attrs.type, t.attrs.value])).toEqual([
      ['checkbox', 'water'],
      ['checkbox', 'wifi'],
      ['checkbox', 'charger'],
    ]);
    expect(controlByLabel(html, list, 'Wi-Fi').attrs.value).toBe('wifi');

    const rating = group(html, list, 'How easy was booking?');
    expect(rating.inputs.map((t) => [t.attrs.type, t.attrs.name, t.attrs.value])).toEqual(
      [1, 2, 3, 4, 5].map((n) => ['radio', 'v:rating', String(n)]),
    );
  });

  it('ties every control to a label, every group to a legend, and help text to its control', () => {
    const controls = list.filter(
      (t) =>
        (t.name === 'input' && t.attrs.type !== 'hidden') || t.name === 'textarea' || t.name === 'select',
    );
    expect(controls.length).toBe(5 + 3 + 3 + 5);
    for (const c of controls) {
      expect(c.attrs.id, `control ${c.attrs.name}`).toBeTruthy();
      const labels = list.filter((t) => t.name === 'label' && t.attrs.for === c.attrs.id);
      expect(labels.length, `label for ${c.attrs.id}`).toBe(1);
      expect(innerText(html, labels[0]!).trim()).not.toBe('');
    }
    const ids = list.map((t) => t.attrs.id).filter((id) => id !== undefined);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of controls.filter((t) => t.attrs.type === 'radio' || t.attrs.type === 'checkbox')) {
      if (c.attrs.name === 'v:child_seat') continue;
      const fieldsets = list.filter((t) => t.name === 'fieldset' && t.at < c.at);
      const last = fieldsets.at(-1)!;
      expect(html.indexOf('</fieldset>', last.at)).toBeGreaterThan(c.at);
    }
    const name = controlByLabel(html, list, 'Full name');
    const help = byId(list, name.attrs['aria-describedby']!);
    expect(innerText(html, help)).toBe('As printed on your passport.');
    // The required marker is part of the label.
    expect(html).toMatch(/Full name <span class="req">\(required\)<\/span><\/label>/);
  });

  it('has one submit button per action, named by its label', () => {
    const buttons = list.filter((t) => t.name === 'button');
    expect(buttons.map((b) => [b.attrs.type, b.attrs.name, b.attrs.value, innerText(html, b)])).toEqual([
      ['submit', '_action', 'confirm', 'Confirm'],
      ['submit', '_action', 'cancel', 'Cancel transfer'],
    ]);
    const form = list.find((t) => t.name === 'form')!;
    expect(form.attrs).toMatchObject({ method: 'post', action: '/s/abc' });
    expect(list.find((t) => t.attrs.name === '_revision')?.attrs).toMatchObject({
      type: 'hidden',
      value: '1',
    });
  });

  it("shows the person's input instead of the prefilled values after a refused submit", () => {
    const again = renderPage(
      formView({
        values: {
          full_name: 'A',
          notes: '',
          bags: 'lots',
          child_seat: false,
          car: 'any',
          extras: ['wifi'],
          rating: 2,
        },
      }),
    );
    const l = tags(again);
    expect(controlByLabel(again, l, 'Full name').attrs.value).toBe('A');
    expect(innerText(again, controlByLabel(again, l, 'Notes for the driver'))).toBe('');
    expect(controlByLabel(again, l, 'Number of bags').attrs.value).toBe('lots');
    expect(controlByLabel(again, l, 'Child seat').attrs.checked).toBeUndefined();
    expect(
      group(again, l, 'Car type')
        .inputs.filter((t) => 'checked' in t.attrs)
        .map((t) => t.attrs.value),
    ).toEqual(['any']);
    expect(
      group(again, l, 'Extras')
        .inputs.filter((t) => 'checked' in t.attrs)
        .map((t) => t.attrs.value),
    ).toEqual(['wifi']);
    expect(
      group(again, l, 'How easy was booking?')
        .inputs.filter((t) => 'checked' in t.attrs)
        .map((t) => t.attrs.value),
    ).toEqual(['2']);
  });

  it('keeps a leading line break of a multi-line value', () => {
    const surface = withComponents(FOLLOW_UP, [
      {
        type: 'field',
        name: 'm',
        label: 'Message',
        multiline: true,
        schema: { type: 'string' },
        value: '\nB',
      },
    ]);
    const out = renderPage({ kind: 'form', surface, revision: 2, actionUrl: '/x' });
    // The parser drops the first newline after <textarea>, so two must be written.
    expect(out).toContain('>\n\nB</textarea>');
  });

  it('links every error: an alert summary pointing at the field, the message tied by aria-describedby', () => {
    const errors = {
      full_name: 'Use at least 2 characters (you have 1).',
      car: 'This is required. Choose one of the options.',
      _action: 'Choose one of the buttons at the end of the form.',
      _form: 'This form changed while you were answering.',
    };
    const out = renderPage(formView({ values: { full_name: 'A' }, errors }));
    const l = tags(out);
    const summary = l.find((t) => t.attrs.role === 'alert')!;
    expect(summary.attrs).toMatchObject({ class: 'summary', tabindex: '-1', autofocus: '' });
    const summaryEnd = out.indexOf('</div>', summary.at);
    const links = l.filter((t) => t.name === 'a' && t.at > summary.at && t.at < summaryEnd);
    expect(links.map((a) => [a.attrs.href, innerText(out, a)])).toEqual([
      [`#${controlByLabel(out, l, 'Full name').attrs.id}`, `Full name: ${errors.full_name}`],
      [`#${group(out, l, 'Car type').fieldset.attrs.id}`, `Car type: ${errors.car}`],
      ['#actions', errors._action],
    ]);
    expect(out.slice(summary.at, summaryEnd)).toContain(errors._form);
    expect(innerText(out, l.find((t) => t.attrs.id === 'summary-title')!)).toBe('Please check 4 things');

    const name = controlByLabel(out, l, 'Full name');
    expect(name.attrs['aria-invalid']).toBe('true');
    const described = name.attrs['aria-describedby']!.split(' ').map((id) => innerText(out, byId(l, id)));
    expect(described).toEqual(['As printed on your passport.', errors.full_name]);
    const car = group(out, l, 'Car type').fieldset;
    expect(car.attrs['aria-invalid']).toBe('true');
    expect(innerText(out, byId(l, car.attrs['aria-describedby']!))).toBe(errors.car);
    const button = l.find((t) => t.name === 'button')!;
    expect(innerText(out, byId(l, button.attrs['aria-describedby']!))).toBe(errors._action);
    // Fields without an error are not marked.
    expect(controlByLabel(out, l, 'Number of bags').attrs['aria-invalid']).toBeUndefined();
  });
});

describe('renderPage: escaping', () => {
  const EVIL = `<script>alert("x")</script><img src=x onerror=alert(1)>'"&amp;`;
  const ALLOWED = new Set(
    'html head meta title style body main h1 h2 p div section dl dt dd form input textarea label fieldset legend button span ul li a svg circle path'.split(
      ' ',
    ),
  );
  const evilSurface = hostileSurface(EVIL, {
    fieldName: EVIL,
    more: [
      { type: 'field', name: 'm', label: EVIL, multiline: true, schema: { type: 'string' }, value: EVIL },
      {
        type: 'field',
        name: 'c',
        label: EVIL,
        schema: { type: 'string', enum: [EVIL, 'b'], option_labels: { b: EVIL } },
        value: EVIL,
      },
    ],
    action: { id: EVIL, label: EVIL, intent: 'submit' },
  });
  const views: [string, PageView][] = [
    [
      'form',
      {
        kind: 'form',
        surface: evilSurface,
        revision: 1,
        actionUrl: EVIL,
        values: { [EVIL]: EVIL, m: EVIL, c: EVIL },
        errors: { [EVIL]: EVIL, c: EVIL, _action: EVIL, other: EVIL },
      },
    ],
    ['waiting', { kind: 'waiting', title: EVIL, pageUrl: EVIL, watchUrl: EVIL }],
    ['done', { kind: 'done', title: EVIL }],
    ['expired', { kind: 'expired', title: EVIL, extendUrl: EVIL }],
    ['ask_name', { kind: 'ask_name', title: EVIL, actionUrl: EVIL, error: EVIL }],
    ['ask_full', { kind: 'ask_full', title: EVIL }],
  ];

  it.each(views)('renders every person-visible string of the %s view inert', (_, view) => {
    // The page's own script is the one script allowed; nothing else may look like one.
    const out = renderPage(view).replace(`<script>${LIVE_SCRIPT}</script>`, '');
    expect(out).not.toMatch(/<script/i);
    expect(out).not.toMatch(/<img/i);
    for (const t of tags(out)) {
      expect(ALLOWED.has(t.name), `tag <${t.name}>`).toBe(true);
      for (const a of Object.keys(t.attrs)) expect(a.startsWith('on'), `attribute ${a}`).toBe(false);
    }
    // The evil string still shows, as text, exactly as written.
    expect(decode(out)).toContain(EVIL);
  });
});

describe('renderPage: the other states', () => {
  const text = (view: PageView) => {
    const out = renderPage(view);
    return {
      out,
      l: tags(out),
      plain: decode(out.replace(/<style>[\s\S]*<\/style>/, '').replace(/<[^>]*>/g, '')),
    };
  };

  it('waiting: says the answer was sent, links to the next step, and watches without any timed reload', () => {
    const view: PageView = {
      kind: 'waiting',
      title: 'Confirm your airport transfer',
      pageUrl: '/s/abc',
      watchUrl: '/s/abc/state?revision=1&status=answered',
    };
    const { out, l, plain } = text(view);
    expect(plain).toContain('Thanks — your answer was sent.');
    expect(plain).toContain('Waiting for the agent');
    expect(l.some((t) => t.attrs['http-equiv']?.toLowerCase() === 'refresh')).toBe(false);
    const status = l.find((t) => t.attrs.role === 'status')!;
    expect(status.attrs).toMatchObject({ 'aria-live': 'polite', 'data-watch': view.watchUrl });
    // Without script, a plain link asks for the page again.
    const link = l.find((t) => t.name === 'a' && t.attrs.href === '/s/abc')!;
    expect(innerText(out, link)).toBe('Check for the next step');
    expect(l.some((t) => t.name === 'form')).toBe(false);
    // The one script is the page's own, allowed by its hash and by nothing broader.
    const scripts = [...out.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    expect(scripts).toEqual([LIVE_SCRIPT]);
    const hash = createHash('sha256').update(LIVE_SCRIPT, 'utf8').digest('base64');
    expect(PAGE_CSP.split('; ').filter((d) => d.startsWith('script-src'))).toEqual([
      `script-src 'sha256-${hash}'`,
    ]);
    expect(LIVE_SCRIPT).not.toMatch(/setInterval|location\.reload|http-equiv/);
    // No watch URL, no script.
    const still = renderPage({ kind: 'waiting', title: 'T', pageUrl: '/s/abc' });
    expect(still).not.toMatch(/<script/i);
    expect(still).toContain('Check for the next step');
  });

  it('done: says the agent has the answer', () => {
    const { l, plain } = text({ kind: 'done', title: 'T' });
    expect(plain).toContain('Done — the agent has your answer.');
    expect(l.some((t) => t.name === 'script' || t.attrs['http-equiv'] === 'refresh')).toBe(false);
  });

  it('expired: final without a button, lapsed with "Ask for more time" posting to the extend URL', () => {
    const closed = text({ kind: 'expired', title: 'T' });
    expect(closed.plain).toContain('This link has expired.');
    expect(closed.l.some((t) => t.name === 'button' || t.name === 'form')).toBe(false);
    const lapsed = text({ kind: 'expired', title: 'T', extendUrl: '/s/abc/extend' });
    expect(lapsed.plain).toContain('This link has run out of time.');
    const form = lapsed.l.find((t) => t.name === 'form')!;
    expect(form.attrs).toMatchObject({ method: 'post', action: '/s/abc/extend' });
    const button = lapsed.l.find((t) => t.name === 'button')!;
    expect(innerText(lapsed.out, button)).toBe('Ask for more time');
  });

  it('ask_name: a labelled "Your name" input, with the error tied to it', () => {
    const first = text({ kind: 'ask_name', title: 'Which day suits you?', actionUrl: '/a/1' });
    const input = controlByLabel(first.out, first.l, 'Your name');
    expect(input.attrs).toMatchObject({ type: 'text', name: 'name', autocomplete: 'name' });
    expect(first.l.find((t) => t.name === 'form')?.attrs).toMatchObject({ method: 'post', action: '/a/1' });
    expect(first.l.some((t) => t.attrs.role === 'alert')).toBe(false);

    const again = text({
      kind: 'ask_name',
      title: 'T',
      actionUrl: '/a/1',
      error: 'Enter your name to start.',
    });
    const input2 = controlByLabel(again.out, again.l, 'Your name');
    expect(input2.attrs['aria-invalid']).toBe('true');
    expect(input2.attrs['aria-describedby']).toContain('name-err');
    expect(innerText(again.out, byId(again.l, 'name-err'))).toBe('Enter your name to start.');
    expect(again.l.some((t) => t.attrs.role === 'alert')).toBe(true);
  });

  it('refuses a view it does not know by name', () => {
    expect(() => renderPage({ kind: 'gone' } as unknown as PageView)).toThrow(
      new TypeError('renderPage: unknown view kind "gone"'),
    );
  });

  it('ask_full and not_found: clear pages without a form', () => {
    const full = text({ kind: 'ask_full', title: 'T' });
    expect(full.plain).toContain('This Ask is full.');
    expect(full.l.some((t) => t.name === 'form')).toBe(false);
    const missing = text({ kind: 'not_found' });
    expect(missing.plain).toContain('This link does not work.');
    expect(missing.l.some((t) => t.name === 'form')).toBe(false);
  });
});

describe('form encoding', () => {
  it('posts exactly what a browser posts, in page order, and reads it back', () => {
    const form = answerToForm(TRIP, TRIP_ANSWER, 1);
    expect([...form]).toEqual([
      ['_revision', '1'],
      ['v:full_name', 'Ana Novak'],
      ['v:notes', 'Ring twice\r\nthen wait'],
      ['v:bags', '3'],
      ['v:tip', '7.5'],
      ['v:child_seat', 'true'],
      ['v:car', 'van'],
      ['v:extras', 'water'],
      ['v:extras', 'charger'],
      ['v:rating', '4'],
      ['_action', 'confirm'],
    ]);
    const back = formToAnswer(TRIP, new URLSearchParams(form.toString()));
    expect(back).toEqual(TRIP_ANSWER);
    expect(validateAnswer(TRIP, back)).toEqual({ ok: true, answer: TRIP_ANSWER });
  });

  it('reads blank and unticked controls the way a browser leaves them', () => {
    // What a browser posts when the person touched nothing except the button.
    const form = new URLSearchParams('_revision=1&v:full_name=&v:notes=&v:bags=&v:tip=&_action=confirm');
    expect(formToAnswer(TRIP, form)).toEqual({
      action: 'confirm',
      values: { full_name: '', notes: '', child_seat: false, extras: [] },
    });
    expect(formToAnswer(TRIP, new URLSearchParams())).toEqual({
      action: '',
      values: { full_name: '', notes: '', child_seat: false, extras: [] },
    });
  });

  it('keeps what does not parse, so validation can name it and the page can show it back', () => {
    const form = new URLSearchParams(
      'v:bags=lots&v:tip=1,5&v:car=truck&v:rating=9&v:child_seat=yes&v:notes=a%0D%0Ab',
    );
    const { values } = formToAnswer(TRIP, form);
    expect(values).toMatchObject({
      bags: 'lots',
      tip: '1,5',
      car: 'truck',
      rating: 9,
      // Not "no": what a box cannot post stays as posted, and validation refuses it.
      child_seat: 'yes',
      notes: 'a\nb',
    });
    expect(formToAnswer(TRIP, new URLSearchParams('')).values.child_seat).toBe(false);
    expect(formToAnswer(TRIP, new URLSearchParams('v:child_seat=true')).values.child_seat).toBe(true);
    expect(formToAnswer(TRIP, new URLSearchParams('v:tip= 2.5e1 ')).values.tip).toBe(25);
    expect(formToAnswer(TRIP, new URLSearchParams('v:tip=Infinity')).values.tip).toBe('Infinity');
    expect(formToAnswer(TRIP, new URLSearchParams('v:tip=0x10')).values.tip).toBe('0x10');
  });

  it('round-trips any valid answer for every field type', () => {
    const noCr = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((s) => !s.includes('\r'));
    const answer = fc.record({
      action: fc.constantFrom('confirm', 'cancel'),
      values: fc.record(
        {
          full_name: noCr.filter((s) => [...s].length >= 2 && [...s].length <= 20 && !s.includes('\n')),
          notes: noCr,
          bags: fc.integer({ min: 0, max: 5 }),
          tip: fc.double({ min: 0, max: 50, noNaN: true }).filter((n) => !Object.is(n, -0)),
          child_seat: fc.boolean(),
          car: fc.constantFrom('sedan', 'van', 'any'),
          extras: fc.subarray(['water', 'wifi', 'charger'], { minLength: 1, maxLength: 2 }),
          rating: fc.integer({ min: 1, max: 5 }),
        },
        { requiredKeys: ['full_name', 'notes', 'bags', 'child_seat', 'car', 'rating'] },
      ),
    });
    fc.assert(
      fc.property(answer, fc.integer({ min: 1, max: 99 }), (a, revision) => {
        const form = answerToForm(TRIP, a, revision);
        expect(form.get('_revision')).toBe(String(revision));
        const back = formToAnswer(TRIP, new URLSearchParams(form.toString()));
        const expected = { ...a, values: { ...a.values, extras: a.values.extras ?? [] } };
        expect(back).toEqual(expected);
        expect(validateAnswer(TRIP, back).ok).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('validateAnswer', () => {
  const valid = TRIP_ANSWER.values;
  const field = (name: string) =>
    TRIP.source.components.find((c): c is FieldComponent => c.type === 'field' && c.name === name)!;

  const rows: [string, Record<string, unknown>, string, Record<string, string>][] = [
    [
      'required text left empty',
      { full_name: '' },
      'confirm',
      { full_name: 'This is required. Please fill it in.' },
    ],
    [
      'required text missing',
      { full_name: undefined },
      'confirm',
      { full_name: 'This is required. Please fill it in.' },
    ],
    [
      'too short (code points)',
      { full_name: '😀' },
      'confirm',
      { full_name: 'Use at least 2 characters (you have 1).' },
    ],
    [
      'too long (code points)',
      { full_name: '😀'.repeat(21) },
      'confirm',
      {
        full_name: 'Use at most 20 characters (you have 21).',
      },
    ],
    ['text of the wrong type', { notes: 5 }, 'confirm', { notes: 'Enter some text here.' }],
    [
      'required integer missing',
      { bags: undefined },
      'confirm',
      { bags: 'This is required. Please fill it in.' },
    ],
    ['integer not a number', { bags: 'lots' }, 'confirm', { bags: 'Enter a whole number, like 12.' }],
    ['integer with decimals', { bags: 2.5 }, 'confirm', { bags: 'Enter a whole number, without decimals.' }],
    ['integer below minimum', { bags: -1 }, 'confirm', { bags: 'Enter a number from 0 to 5.' }],
    ['integer above maximum', { bags: 6 }, 'confirm', { bags: 'Enter a number from 0 to 5.' }],
    ['number not a number', { tip: '1,5' }, 'confirm', { tip: 'Enter a number, like 12 or 3.5.' }],
    ['number above maximum', { tip: 50.01 }, 'confirm', { tip: 'Enter a number from 0 to 50.' }],
    [
      'boolean of the wrong type',
      { child_seat: 'yes' },
      'confirm',
      {
        child_seat: 'Tick the box for yes, or leave it empty for no.',
      },
    ],
    [
      'required choice missing',
      { car: undefined },
      'confirm',
      { car: 'This is required. Choose one of the options.' },
    ],
    ['choice not in the enum', { car: 'truck' }, 'confirm', { car: 'Choose one of the options shown.' }],
    ['multi-choice below minItems', { extras: [] }, 'confirm', {}],
    [
      'multi-choice above maxItems',
      { extras: ['water', 'wifi', 'charger'] },
      'confirm',
      {
        extras: 'Choose at most 2 options (you chose 3).',
      },
    ],
    [
      'multi-choice with an unknown option',
      { extras: ['water', 'cake'] },
      'confirm',
      {
        extras: 'Choose only from the options shown.',
      },
    ],
    [
      'multi-choice twice the same',
      { extras: ['wifi', 'wifi'] },
      'confirm',
      {
        extras: 'Choose each option only once ("Wi-Fi" is chosen twice).',
      },
    ],
    ['multi-choice not a list', { extras: 'wifi' }, 'confirm', { extras: 'Choose from the options shown.' }],
    [
      'required rating missing',
      { rating: undefined },
      'confirm',
      { rating: 'This is required. Choose a rating.' },
    ],
    ['rating out of range', { rating: 6 }, 'confirm', { rating: 'Choose a rating from 1 to 5.' }],
    ['rating not whole', { rating: 2.5 }, 'confirm', { rating: 'Choose a rating from 1 to 5.' }],
    ['unknown field', { color: 'red' }, 'confirm', { color: 'This form has no such field.' }],
    [
      'unknown action',
      {},
      'delete',
      {
        _action: 'That button is not part of this form. Choose one of the buttons at the end of the form.',
      },
    ],
    ['no action', {}, '', { _action: 'Choose one of the buttons at the end of the form.' }],
    [
      'several problems at once',
      { full_name: '', bags: 9 },
      'nope',
      {
        full_name: 'This is required. Please fill it in.',
        bags: 'Enter a number from 0 to 5.',
        _action: 'That button is not part of this form. Choose one of the buttons at the end of the form.',
      },
    ],
  ];

  it.each(rows)('%s', (_, change, action, errors) => {
    const values: Record<string, unknown> = { ...valid, ...change };
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete values[k];
    const result = validateAnswer(TRIP, { action, values });
    if (Object.keys(errors).length === 0) expect(result.ok).toBe(true);
    else expect(result).toEqual({ ok: false, errors });
  });

  it('applies minItems to a required multi-choice, and requires one option', () => {
    const surface = withComponents(TRIP, [
      {
        ...field('extras'),
        required: true,
        schema: { ...(field('extras').schema as object), minItems: 2 } as never,
      },
    ]);
    expect(validateAnswer(surface, { action: 'confirm', values: { extras: [] } })).toEqual({
      ok: false,
      errors: { extras: 'This is required. Choose at least one option.' },
    });
    expect(validateAnswer(surface, { action: 'confirm', values: { extras: ['wifi'] } })).toEqual({
      ok: false,
      errors: { extras: 'Choose at least 2 options (you chose 1).' },
    });
  });

  it('uses one-sided bound messages and singular words where they fit', () => {
    const surface = withComponents(TRIP, [
      { type: 'field', name: 'a', label: 'A', schema: { type: 'number', minimum: 1 } },
      { type: 'field', name: 'b', label: 'B', schema: { type: 'number', maximum: 3 } },
      { type: 'field', name: 'c', label: 'C', schema: { type: 'string', minLength: 1 } },
    ]);
    expect(validateAnswer(surface, { action: 'confirm', values: { a: 0, b: 4, c: '' } })).toEqual({
      ok: false,
      errors: {
        a: 'Enter a number of at least 1.',
        b: 'Enter a number of at most 3.',
        c: 'Use at least 1 character (you have 0).',
      },
    });
  });

  it('accepts optional fields left empty and returns only the Surface fields, in page order', () => {
    const result = validateAnswer(TRIP, {
      action: 'cancel',
      values: { rating: 1, car: 'any', bags: 0, full_name: 'Bo', notes: '', child_seat: false, extras: [] },
    });
    expect(result).toEqual({
      ok: true,
      answer: {
        action: 'cancel',
        values: { full_name: 'Bo', notes: '', bags: 0, child_seat: false, car: 'any', extras: [], rating: 1 },
      },
    });
    if (result.ok) {
      expect(Object.keys(result.answer.values)).toEqual([
        'full_name',
        'notes',
        'bags',
        'child_seat',
        'car',
        'extras',
        'rating',
      ]);
    }
  });

  it('takes an unticked required checkbox as "no", and marks it as nothing special', () => {
    const surface = withComponents(TRIP, [
      { type: 'field', name: 'ok', label: 'Send a copy', required: true, schema: { type: 'boolean' } },
    ]);
    const parsed = formToAnswer(surface, new URLSearchParams('_action=confirm'));
    expect(validateAnswer(surface, parsed)).toEqual({
      ok: true,
      answer: { action: 'confirm', values: { ok: false } },
    });
    const html = renderPage({ kind: 'form', surface, revision: 1, actionUrl: '/s/x' });
    expect(html).not.toContain('(required)');
    expect(controlByLabel(html, tags(html), 'Send a copy').attrs.required).toBeUndefined();
  });

  it('treats a field named __proto__ as a plain key', () => {
    const surface = withComponents(TRIP, [
      { type: 'field', name: '__proto__', label: 'P', required: true, schema: { type: 'string' } },
    ]);
    const parsed = formToAnswer(surface, new URLSearchParams('v:__proto__=x&_action=confirm'));
    expect(Object.getPrototypeOf(parsed.values)).toBe(Object.prototype);
    const result = validateAnswer(surface, parsed);
    expect(result.ok).toBe(true);
    if (result.ok)
      expect(Object.getOwnPropertyDescriptor(result.answer.values, '__proto__')?.value).toBe('x');
    // Without the value, "required" is reported rather than reading Object.prototype.
    expect(validateAnswer(surface, { action: 'confirm', values: {} })).toEqual({
      ok: false,
      errors: JSON.parse('{"__proto__":"This is required. Please fill it in."}'),
    });
  });
});

describe('the one-Session mount (one-session-mount.ts)', () => {
  it('the documented mount serves the form, refuses a bad answer with 422, takes a good one with 303', async () => {
    const answers: unknown[] = [];
    const handler = examplePageHandler(TRIP, '/s/demo', (a) => answers.push(a));
    const server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s/demo`;
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<h1>Confirm your airport transfer</h1>');
      const bad = { action: 'confirm', values: { ...TRIP_ANSWER.values, bags: 9 } };
      expect(await exampleSubmit(url, TRIP, bad, 1)).toBe(422);
      expect(answers).toEqual([]);
      expect(await exampleSubmit(url, TRIP, TRIP_ANSWER, 1)).toBe(303);
      expect(answers).toEqual([TRIP_ANSWER]);
      expect(await (await fetch(url)).text()).toContain('Thanks — your answer was sent.');
      expect(await exampleSubmit(url, TRIP, TRIP_ANSWER, 1)).toBe(409);
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  });
});
