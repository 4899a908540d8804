// hak's operator console, shared by its pages: the admin token the operator types once (kept
// in sessionStorage: this tab only, never in a URL), the admin API of the server that served
// the page, the pages (one <section> each, chosen by the URL's #fragment) and their polling.
// Everything shown comes from the server's JSON and is written as text, never as HTML.
'use strict';

const hak = (() => {
  const TOKEN_KEY = 'hak-admin-token';
  const POLL_MS = 1000;
  const pages = new Map();
  // What shows on every page (the kill switch): refreshed with the page, hidden when the
  // token cannot read it.
  const widgets = [];
  let polling = null;
  // Counts sign-ins and sign-outs: an answer to a request sent under an earlier token (one
  // still in flight when the operator signs in again) is not the current token's.
  let session = 0;

  const $ = (id) => document.getElementById(id);

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function button(className, text, onClick) {
    const node = element('button', className, text);
    node.type = 'button';
    node.addEventListener('click', onClick);
    return node;
  }

  const token = () => sessionStorage.getItem(TOKEN_KEY);

  function status(text) {
    $('status').textContent = text || '';
  }

  class Unauthorized extends Error {}

  // JSON with every `amount` kept exact: the facts count tinybars and base units in u64, past
  // what a JavaScript number holds. Browsers that give a reviver the number's source text
  // (JSON.parse source text access) keep it whole; others keep the number as it reads.
  function parseExact(text) {
    return JSON.parse(text, function (key, value, context) {
      if (key === 'amount' && typeof value === 'number') {
        return context && typeof context.source === 'string'
          ? BigInt(context.source)
          : BigInt(Math.trunc(value));
      }
      return value;
    });
  }

  // The text of an admin route (the bearer sent; a refusal thrown with its reason).
  async function fetchText(path, options = {}) {
    const headers = Object.assign({ Authorization: 'Bearer ' + token() }, options.headers);
    const response = await fetch(path, Object.assign({}, options, { headers, cache: 'no-store' }));
    const text = await response.text();
    if (response.status === 401 || response.status === 403 || !response.ok) {
      let reason = 'HTTP ' + response.status;
      try {
        reason = JSON.parse(text).error || reason;
      } catch (e) {
        // not JSON: the status says it
      }
      const Failure = response.status === 401 || response.status === 403 ? Unauthorized : Error;
      throw new Failure(reason);
    }
    return text;
  }

  async function api(path, options = {}) {
    const text = await fetchText(path, options);
    let body = null;
    try {
      body = text ? parseExact(text) : null;
    } catch (e) {
      throw new Error('not JSON: ' + e.message);
    }
    return body;
  }

  // POST `body` as JSON.
  const post = (path, body) =>
    api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body || {}) });

  function handle(e) {
    if (e instanceof Unauthorized) {
      signOut('The server refused the token: ' + e.message);
    } else {
      status('The server did not answer as expected: ' + e.message);
    }
  }

  function current() {
    const name = location.hash.slice(1);
    return pages.has(name) ? name : pages.keys().next().value;
  }

  // Refresh the page on show; a poll that fails says why once it answers again.
  async function refresh() {
    if (!token()) return;
    for (const widget of widgets) widget.refresh().catch(() => widget.clear());
    try {
      await pages.get(current()).refresh();
      if ($('status').dataset.kind === 'poll') {
        status('');
        delete $('status').dataset.kind;
      }
    } catch (e) {
      // An approver's key reads the approvals only: another page refuses it, which is no
      // reason to forget it.
      if (e instanceof Unauthorized && current() !== 'approvals') {
        try {
          await fetchText('/v1/approvals');
          status("This key is an approver's: it reads and decides the calls awaiting approval, nothing else.");
          return;
        } catch (_) {
          // Not an approver's either: refused below.
        }
      }
      handle(e);
      $('status').dataset.kind = 'poll';
    }
  }

  function show() {
    const name = current();
    for (const [other, page] of pages) {
      $(other + '-page').hidden = other !== name;
      const link = document.querySelector('nav a[href="#' + other + '"]');
      if (other === name) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
      if (other !== name && page.hide) page.hide();
    }
    refresh();
  }

  function signedIn() {
    session += 1;
    // A widget refused under the token before starts over with this one.
    for (const widget of widgets) widget.clear();
    $('sign-in').hidden = true;
    $('signed-in').hidden = false;
    show();
    if (!polling) polling = setInterval(refresh, POLL_MS);
  }

  function signOut(why) {
    session += 1;
    sessionStorage.removeItem(TOKEN_KEY);
    clearInterval(polling);
    polling = null;
    for (const page of pages.values()) page.clear();
    for (const widget of widgets) widget.clear();
    $('sign-in').hidden = false;
    $('signed-in').hidden = true;
    status(why || '');
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('sign-in').addEventListener('submit', (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $('token').value);
      $('token').value = '';
      status('');
      signedIn();
    });
    $('sign-out').addEventListener('click', () => signOut());
    window.addEventListener('hashchange', show);
    for (const page of pages.values()) if (page.start) page.start();
    if (token()) signedIn();
    else show();
  });

  return {
    $,
    element,
    button,
    api,
    fetchText,
    post,
    status,
    handle,
    refresh,
    // The current sign-in: compare before and after a request to drop a stale answer.
    session: () => session,
    // A page: `refresh()` loads and shows its data (throws on failure), `clear()` forgets it
    // on sign-out; optional `start()` once the document is ready, `hide()` when another shows.
    page: (name, page) => pages.set(name, page),
    // Shown above every page: `refresh()` and `clear()` as a page's.
    widget: (widget) => widgets.push(widget),
  };
})();
