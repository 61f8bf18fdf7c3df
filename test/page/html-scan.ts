/**
 * A small scanner for the answer page's own HTML, for unit tests: it lists start tags with their
 * attributes and decodes text. It relies on what `renderPage` promises (double-quoted attributes,
 * escaped text) and is not a general HTML parser — the browser suite checks the real thing.
 */

/** One start tag. */
export interface Tag {
  name: string;
  attrs: Record<string, string>;
  /** Offset of `<` in the document. */
  at: number;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

/** Decodes the five entities `escapeHtml` writes. */
export function decode(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ENTITIES[e]!);
}

/** Every start tag of `html`, in order. */
export function tags(html: string): Tag[] {
  const out: Tag[] = [];
  for (const m of html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)((?:\s+[^\s=>/]+(?:="[^"]*")?)*)\s*\/?>/g)) {
    const attrs: Record<string, string> = {};
    for (const a of m[2]!.matchAll(/([^\s=>/]+)(?:="([^"]*)")?/g))
      attrs[a[1]!.toLowerCase()] = decode(a[2] ?? '');
    out.push({ name: m[1]!.toLowerCase(), attrs, at: m.index });
  }
  return out;
}

/** The decoded text between the start tag at `tag.at` and its matching end tag (no nesting of the same name). */
export function innerText(html: string, tag: Tag): string {
  const start = html.indexOf('>', tag.at) + 1;
  const end = html.indexOf(`</${tag.name}>`, start);
  return decode(html.slice(start, end).replace(/<[^>]*>/g, ''));
}

/** The one tag with `id`, or a failure. */
export function byId(list: Tag[], id: string): Tag {
  const found = list.filter((t) => t.attrs.id === id);
  if (found.length !== 1) throw new Error(`expected one element with id ${id}, found ${found.length}`);
  return found[0]!;
}
