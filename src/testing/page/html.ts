/**
 * The HTML shell of the answer page: escaping, the document frame, the inline style sheet and the
 * Content-Security-Policy the page is written for. No external asset; the one script (`live.ts`)
 * is allowed by its hash and only keeps an open page current, so the page works with JavaScript
 * off.
 *
 * It knows nothing about Surfaces or states (`render.ts` does).
 */
import { LIVE_SCRIPT, LIVE_SCRIPT_SOURCE } from './live.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Escapes text for HTML content and double- or single-quoted attribute values. Every
 * person-visible string on the page goes through this.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * The Content-Security-Policy the page is built for: no script but the page's own (allowed by its
 * SHA-256 hash), requests to the same origin only, inline style only, forms post to the same
 * origin only. The page carries it in a `<meta>`; a server may also send it as a header.
 */
export const PAGE_CSP = `default-src 'none'; script-src ${LIVE_SCRIPT_SOURCE}; connect-src 'self'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

// Browsers ignore (and warn about) frame-ancestors in a <meta>; it only works as a header.
const META_CSP = PAGE_CSP.replace(/; frame-ancestors [^;]*/, '');

// Colours are variables so a dark phone gets a dark page. In both schemes text contrasts at least
// 4.5:1 with its background and control borders at least 3:1 (WCAG 1.4.3 and 1.4.11).
const STYLE = `
:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--fg:#1b1f24;--muted:#5b6270;--line:#d6d9de;--soft:#eceef1;--edge:#8a919c;--accent:#1f6feb;--on-accent:#fff;--bad:#b42318;--bad-bg:#fef3f2;--good:#1a7f37}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--card:#161b22;--fg:#e6edf3;--muted:#9da7b3;--line:#30363d;--soft:#21262d;--edge:#6e7681;--accent:#4493f8;--on-accent:#0d1117;--bad:#ff7b72;--bad-bg:#2d1214;--good:#3fb950}}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:40rem;margin:0 auto;padding:1rem;background:var(--card);min-height:100vh}
@media (min-width:42rem){main{margin:1.5rem auto;min-height:0;border-radius:12px;padding:1.5rem 2rem;box-shadow:0 1px 4px rgba(0,0,0,.08)}}
h1{font-size:1.375rem;line-height:1.3;margin:.25rem 0 .75rem;overflow-wrap:anywhere}
h2{font-size:1.125rem;margin:1.5rem 0 .5rem;overflow-wrap:anywhere}
p{margin:.5rem 0}
.lead{color:var(--muted)}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
.record{margin:1rem 0;border:1px solid var(--line);border-radius:8px;padding:.5rem .75rem}
.record .caption{font-weight:600;margin:.25rem 0 .5rem;overflow-wrap:anywhere}
.record dl{margin:0}
.record dl>div{padding:.375rem 0;border-top:1px solid var(--soft)}
.record dl>div:first-child{border-top:0}
.record dt{font-size:.875rem;color:var(--muted);overflow-wrap:anywhere}
.record dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
.field{margin:1.25rem 0;border:0;padding:0;min-width:0}
.field>label,.field legend{display:block;font-weight:600;margin-bottom:.25rem;padding:0;overflow-wrap:anywhere}
.req{font-weight:400;color:var(--muted);font-size:.875rem}
.help{font-size:.875rem;color:var(--muted);margin:0 0 .375rem;overflow-wrap:anywhere}
input[type=text],input[type=number],textarea{display:block;width:100%;font:inherit;padding:.625rem .75rem;border:1px solid var(--edge);border-radius:8px;background:var(--card);color:inherit}
textarea{min-height:8rem;resize:vertical}
input:focus-visible,textarea:focus-visible,button:focus-visible,.summary:focus{outline:3px solid var(--accent);outline-offset:2px}
input[type=checkbox],input[type=radio]{accent-color:var(--accent)}
.opt{display:flex;align-items:flex-start;gap:.625rem;padding:.5rem 0}
.opt input{width:1.375rem;height:1.375rem;margin:.0625rem 0 0;flex:none}
.opt label{overflow-wrap:anywhere}
.rating{display:flex;flex-wrap:wrap;gap:.25rem}
.rating .opt{flex-direction:column-reverse;align-items:center;gap:.125rem;min-width:2.75rem;padding:.25rem 0}
.rating .opt label{font-weight:600}
.invalid input[type=text],.invalid input[type=number],.invalid textarea{border:2px solid var(--bad)}
.error{color:var(--bad);font-weight:600;margin:.25rem 0;overflow-wrap:anywhere}
.summary{border:2px solid var(--bad);border-radius:8px;padding:.5rem 1rem;margin:1rem 0;background:var(--bad-bg)}
.summary h2{margin:.25rem 0;color:var(--bad)}
.summary ul{margin:.25rem 0;padding-left:1.25rem}
.summary a{color:var(--bad)}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin:1.5rem 0 .5rem}
.actions .error{flex-basis:100%}
button{font:inherit;font-weight:600;min-height:2.75rem;padding:.625rem 1.25rem;border-radius:8px;border:1px solid var(--accent);background:var(--accent);color:var(--on-accent);cursor:pointer;flex:1 1 auto}
button.reject{background:transparent;color:var(--bad);border-color:var(--bad)}
.state{text-align:center;padding:2rem 0}
.state .icon{display:block;margin:0 auto .5rem;color:var(--accent)}
.state .icon-check{color:var(--good)}
.state .icon-stop,.state .icon-question{color:var(--muted)}
.muted{color:var(--muted);font-size:.875rem}
a{color:var(--accent)}
a.button{display:inline-flex;align-items:center;justify-content:center;min-height:2.75rem;padding:.625rem 1.25rem;border-radius:8px;border:1px solid var(--accent);background:var(--accent);color:var(--on-accent);font-weight:600;text-decoration:none}
a.button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
`;

/** Options of {@link documentHtml}. */
export interface DocumentOptions {
  /** Plain text for `<title>` (escaped here). */
  title: string;
  /** Already-escaped HTML for `<main>`. */
  body: string;
  /** Add the page's script (`live.ts`), which keeps a page with a `data-watch` element current. */
  live?: boolean;
}

/** A whole HTML document around already-escaped `body` markup. */
export function documentHtml(options: DocumentOptions): string {
  const script = options.live ? `<script>${LIVE_SCRIPT}</script>\n` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(META_CSP)}">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(options.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${options.body}
</main>
${script}</body>
</html>
`;
}
