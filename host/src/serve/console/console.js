// hak's operator console: the admin routes of the server that serves this page, read with
// the admin token the operator types once (kept in sessionStorage: this tab only, never in a
// URL). Everything shown comes from the server's JSON and is written as text, never as HTML.
'use strict';

const TOKEN_KEY = 'hak-admin-token';
const POLL_MS = 1000;
// The facts' "all of it" (u64::MAX): a deleted account's balance, every serial.
const ALL = 18446744073709551615n;

const $ = (id) => document.getElementById(id);

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

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

async function api(path, options = {}) {
  const headers = Object.assign({ Authorization: 'Bearer ' + token() }, options.headers);
  const response = await fetch(path, Object.assign({}, options, { headers, cache: 'no-store' }));
  const text = await response.text();
  let body = null;
  try {
    body = text ? parseExact(text) : null;
  } catch (e) {
    body = null;
  }
  if (response.status === 401 || response.status === 403) {
    throw new Unauthorized((body && body.error) || 'HTTP ' + response.status);
  }
  if (!response.ok) {
    throw new Error((body && body.error) || 'HTTP ' + response.status);
  }
  return body;
}

// Tinybars (BigInt) as HBAR, exactly: 150000000 → "1.5".
function hbar(tinybars) {
  const whole = tinybars / 100000000n;
  const fraction = (tinybars % 100000000n).toString().padStart(8, '0').replace(/0+$/, '');
  return whole.toString() + (fraction ? '.' + fraction : '');
}

function describeMovement(m) {
  const item = element('li');
  const to = m.to ? m.to : 'a new account';
  const all = m.amount === ALL;
  const kind = m.asset.kind;
  let what;
  if (kind === 'hbar') {
    what = all ? 'the whole HBAR balance' : hbar(m.amount) + ' ℏ';
  } else if (kind === 'token') {
    what = all ? 'every unit of token ' + m.asset.id : m.amount.toString() + ' base units of token ' + m.asset.id;
  } else {
    what = all ? 'every serial of NFT ' + m.asset.id : m.amount.toString() + ' NFT(s) of ' + m.asset.id;
  }
  item.append(
    element('span', 'amount', what),
    document.createTextNode(m.via === 'allowance' ? ' as an allowance for ' : ' to '),
    element('span', 'id', to),
  );
  return item;
}

// What a parked call does, from the host's facts (or its params when it states none).
function describeCall(approval) {
  const facts = approval.facts;
  if (!facts) {
    const params = element('pre', 'params');
    params.textContent = approval.normalisedParams
      ? JSON.stringify(approval.normalisedParams, (k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)
      : 'The tool states no facts and no params for this stage.';
    return [element('p', null, 'No facts stated; the params:'), params];
  }
  const list = element('ul', 'facts');
  for (const m of facts.movements) list.append(describeMovement(m));
  if (facts.movements.length === 0) list.append(element('li', null, 'Moves no value.'));
  if (facts.source) list.append(element('li', null, 'From ' + facts.source));
  for (const change of facts.changes) list.append(element('li', null, 'Changes ' + change.kind + ' ' + change.id));
  if (facts.tokens.length) list.append(element('li', null, 'Tokens named: ' + facts.tokens.join(', ')));
  if (facts.memo) list.append(element('li', null, 'Memo: ' + facts.memo));
  if (facts.scheduled) list.append(element('li', null, 'Scheduled (executes when its signatures are complete)'));
  return [list];
}

function timeLeft(expiresAt) {
  const ms = Date.parse(expiresAt) - Date.now();
  if (!(ms > 0)) return { text: 'expiring', soon: true };
  const s = Math.floor(ms / 1000);
  return { text: Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0') + ' left', soon: s < 30 };
}

async function decide(card, approval, approve) {
  const buttons = card.querySelectorAll('button');
  buttons.forEach((b) => (b.disabled = true));
  const note = card.querySelector('input').value.trim();
  const verb = approve ? 'approve' : 'deny';
  try {
    await api('/v1/approvals/' + encodeURIComponent(approval.id) + '/' + verb, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(note ? { note } : {}),
    });
    card.remove();
    status('');
    refresh();
  } catch (e) {
    buttons.forEach((b) => (b.disabled = false));
    handle(e);
  }
}

function card(approval) {
  const node = element('li', 'card');
  node.dataset.id = approval.id;
  node.dataset.expires = approval.expiresAt;
  const meta = element('p', 'meta');
  meta.append(
    element('span', null, 'agent ' + (approval.agent || approval.context)),
    element('span', null, 'asked by ' + approval.policyName + ' (' + approval.plugin + ')'),
    element('span', null, 'at ' + approval.stage),
    element('span', 'left'),
  );
  const note = element('input');
  note.type = 'text';
  note.placeholder = 'note for the agent and the log (optional)';
  note.setAttribute('aria-label', 'note');
  const approveButton = element('button', 'approve', 'Approve');
  approveButton.type = 'button';
  approveButton.addEventListener('click', () => decide(node, approval, true));
  const denyButton = element('button', 'deny', 'Deny');
  denyButton.type = 'button';
  denyButton.addEventListener('click', () => decide(node, approval, false));
  const actions = element('div', 'decide');
  actions.append(note, approveButton, denyButton);
  node.append(element('h3', null, approval.tool), meta, element('p', 'message', approval.message), ...describeCall(approval), actions);
  return node;
}

function tick() {
  for (const node of $('approvals').children) {
    const left = timeLeft(node.dataset.expires);
    const label = node.querySelector('.left');
    label.textContent = left.text;
    label.classList.toggle('soon', left.soon);
  }
}

// Cards are kept across polls (a note being typed survives), added and removed by id.
function render(approvals) {
  const list = $('approvals');
  const ids = new Set(approvals.map((a) => a.id));
  for (const node of [...list.children]) {
    if (!ids.has(node.dataset.id)) node.remove();
  }
  const shown = new Set([...list.children].map((n) => n.dataset.id));
  for (const approval of approvals) {
    if (!shown.has(approval.id)) list.append(card(approval));
  }
  $('approvals-count').textContent = approvals.length ? '(' + approvals.length + ')' : '';
  $('approvals-empty').hidden = approvals.length > 0;
  tick();
}

function handle(e) {
  if (e instanceof Unauthorized) {
    signOut('The server refused the token: ' + e.message);
  } else {
    status('The server did not answer as expected: ' + e.message);
  }
}

let polling = null;

async function refresh() {
  if (!token()) return;
  try {
    const body = await api('/v1/approvals');
    render(body.approvals);
    if ($('status').dataset.kind === 'poll') {
      status('');
      delete $('status').dataset.kind;
    }
  } catch (e) {
    handle(e);
    $('status').dataset.kind = 'poll';
  }
}

function signedIn() {
  $('sign-in').hidden = true;
  $('signed-in').hidden = false;
  refresh();
  if (!polling) polling = setInterval(refresh, POLL_MS);
}

function signOut(why) {
  sessionStorage.removeItem(TOKEN_KEY);
  clearInterval(polling);
  polling = null;
  $('approvals').replaceChildren();
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
  setInterval(tick, 1000);
  if (token()) signedIn();
});
