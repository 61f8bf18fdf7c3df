/**
 * The HTML shell of the answer page: escaping, the document frame, the inline style sheet and the
 * Content-Security-Policy the page is written for. No external asset and no script: the page
 * works with JavaScript off.
 *
 * It knows nothing about Surfaces or states (`render.ts` does).
 */

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
 * The Content-Security-Policy the page is built for: no script at all, inline style only, forms
 * post to the same origin only. The page carries it in a `<meta>`; a server may also send it as a
 * header.
 */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

// Browsers ignore (and warn about) frame-ancestors in a <meta>; it only works as a header.
const META_CSP = PAGE_CSP.replace(/; frame-ancestors [^;]*/, '');

const STYLE = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f4f5f7}
main{max-width:40rem;margin:0 auto;padding:1rem;background:#fff;min-height:100vh}
@media (min-width:42rem){main{margin:1.5rem auto;min-height:0;border-radius:12px;padding:1.5rem 2rem;box-shadow:0 1px 4px rgba(0,0,0,.08)}}
h1{font-size:1.375rem;line-height:1.3;margin:.25rem 0 .75rem;overflow-wrap:anywhere}
h2{font-size:1.125rem;margin:1.5rem 0 .5rem;overflow-wrap:anywhere}
p{margin:.5rem 0}
.lead{color:#3d4451}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
.record{margin:1rem 0;border:1px solid #d6d9de;border-radius:8px;padding:.5rem .75rem}
.record .caption{font-weight:600;margin:.25rem 0 .5rem;overflow-wrap:anywhere}
.record dl{margin:0}
.record dl>div{padding:.375rem 0;border-top:1px solid #eceef1}
.record dl>div:first-child{border-top:0}
.record dt{font-size:.875rem;color:#5b6270;overflow-wrap:anywhere}
.record dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
.field{margin:1.25rem 0;border:0;padding:0;min-width:0}
.field>label,.field legend{display:block;font-weight:600;margin-bottom:.25rem;padding:0;overflow-wrap:anywhere}
.req{font-weight:400;color:#5b6270;font-size:.875rem}
.help{font-size:.875rem;color:#5b6270;margin:0 0 .375rem;overflow-wrap:anywhere}
input[type=text],input[type=number],textarea{display:block;width:100%;font:inherit;padding:.625rem .75rem;border:1px solid #8a919c;border-radius:8px;background:#fff;color:inherit}
textarea{min-height:8rem;resize:vertical}
input:focus-visible,textarea:focus-visible,button:focus-visible{outline:3px solid #1f6feb;outline-offset:2px}
.opt{display:flex;align-items:flex-start;gap:.625rem;padding:.5rem 0}
.opt input{width:1.375rem;height:1.375rem;margin:.0625rem 0 0;flex:none}
.opt label{overflow-wrap:anywhere}
.rating{display:flex;flex-wrap:wrap;gap:.25rem}
.rating .opt{flex-direction:column-reverse;align-items:center;gap:.125rem;min-width:2.75rem;padding:.25rem 0}
.rating .opt label{font-weight:600}
.invalid input[type=text],.invalid input[type=number],.invalid textarea{border:2px solid #b42318}
.error{color:#b42318;font-weight:600;margin:.25rem 0;overflow-wrap:anywhere}
.summary:focus{outline:3px solid #1f6feb;outline-offset:2px}
.summary{border:2px solid #b42318;border-radius:8px;padding:.5rem 1rem;margin:1rem 0;background:#fef3f2}
.summary h2{margin:.25rem 0;color:#b42318}
.summary ul{margin:.25rem 0;padding-left:1.25rem}
.summary a{color:#b42318}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin:1.5rem 0 .5rem}
.actions .error{flex-basis:100%}
button{font:inherit;font-weight:600;min-height:2.75rem;padding:.625rem 1.25rem;border-radius:8px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;cursor:pointer;flex:1 1 auto}
button.secondary{background:#fff;color:#1f6feb}
button.reject{background:#fff;color:#b42318;border-color:#b42318}
.state{text-align:center;padding:2rem 0}
.state .icon{display:block;margin:0 auto .5rem;color:#1f6feb}
.state .icon-check{color:#1a7f37}
.state .icon-stop,.state .icon-question{color:#5b6270}
.muted{color:#5b6270;font-size:.875rem}
a{color:#1f6feb}
`;

/** Options of {@link documentHtml}. */
export interface DocumentOptions {
  /** Plain text for `<title>` (escaped here). */
  title: string;
  /** Already-escaped HTML for `<main>`. */
  body: string;
  /** Seconds after which the browser reloads the page by itself (no script needed). */
  refreshSeconds?: number;
}

/** A whole HTML document around already-escaped `body` markup. */
export function documentHtml(options: DocumentOptions): string {
  const refresh =
    options.refreshSeconds === undefined
      ? ''
      : `<meta http-equiv="refresh" content="${Math.max(1, Math.floor(options.refreshSeconds))}">\n`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(META_CSP)}">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
${refresh}<title>${escapeHtml(options.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${options.body}
</main>
</body>
</html>
`;
}
