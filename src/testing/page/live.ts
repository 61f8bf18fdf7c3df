/**
 * The answer page's one script: it keeps an open page current without any timed reload. A page
 * whose Session can still move on by itself (today "waiting for the agent") marks its state
 * element with `data-watch="<watch URL>"`; the script asks that URL, which the server holds until
 * the Session changes in any way (see the runtime's page routes), and when it has changed fetches
 * the page again and swaps its `<main>` in place, moving focus to the new heading so a screen
 * reader reads it. Nothing changes, nothing is fetched, and the page still works with script off:
 * every watching page also carries a plain link that re-requests it.
 *
 * Any page can opt in by rendering a `data-watch` element: the watch reports every change of the
 * Session (revision or status). An open form marks its element `data-watch-final` as well: only a
 * final state (the agent withdrew the question, it expired or was completed) replaces it, so what
 * the person typed is never thrown away for a change that still lets them answer; after any other
 * change the form stops watching and its submit shows where things are.
 *
 * The script is a constant so the Content-Security-Policy can allow exactly it by its SHA-256
 * hash (no `'unsafe-inline'`). It renders nothing else.
 */
import { createHash } from 'node:crypto';

/**
 * The script's source, exactly as it stands between `<script>` and `</script>`. It fetches only
 * same-origin URLs the page itself names, and backs off (1 s doubling to 30 s) when the server is
 * unreachable.
 */
export const LIVE_SCRIPT = `(function () {
  'use strict';
  var delay = 1000;
  function request(url) {
    return fetch(url, { cache: 'no-store', credentials: 'same-origin' }).then(function (r) {
      if (!r.ok && r.status !== 404 && r.status !== 410) throw new Error('status ' + r.status);
      return r;
    });
  }
  function watch() {
    var root = document.querySelector('[data-watch]');
    if (!root || !window.fetch || !window.DOMParser) return;
    var finalOnly = root.hasAttribute('data-watch-final');
    request(root.getAttribute('data-watch'))
      .then(function (r) { return r.json(); })
      .then(function (state) {
        delay = 1000;
        if (state.changed && (state.final || !finalOnly)) return swap();
        if (!state.changed && !state.final) watch();
      })
      .catch(function () {
        setTimeout(watch, delay);
        delay = Math.min(delay * 2, 30000);
      });
  }
  function swap() {
    return request(location.href)
      .then(function (r) { return r.text(); })
      .then(function (html) {
        var next = new DOMParser().parseFromString(html, 'text/html');
        var main = next.querySelector('main');
        var current = document.querySelector('main');
        if (!main || !current) throw new Error('no page');
        document.title = next.title;
        current.replaceWith(document.adoptNode(main));
        var heading = document.querySelector('main h1');
        if (heading) {
          heading.tabIndex = -1;
          heading.focus();
        }
        watch();
      });
  }
  watch();
})();`;

/** `'sha256-…'`: the CSP source that allows {@link LIVE_SCRIPT} and nothing else. */
export const LIVE_SCRIPT_SOURCE = `'sha256-${createHash('sha256').update(LIVE_SCRIPT, 'utf8').digest('base64')}'`;
