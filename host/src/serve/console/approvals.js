// The Approvals page: each call parked on a needs-approval verdict, what it does (from the
// host's facts), the time left, who approved so far when a quorum of approvers must, and
// Approve / Deny with a note.
'use strict';

(() => {
  const { $, element, button } = hak;
  // The facts' "all of it" (u64::MAX): a deleted account's balance, every serial.
  const ALL = 18446744073709551615n;

  // Tinybars (BigInt) as HBAR, exactly: 150000000 → "1.5".
  function hbar(tinybars) {
    const whole = tinybars / 100000000n;
    const fraction = (tinybars % 100000000n).toString().padStart(8, '0').replace(/0+$/, '');
    return whole.toString() + (fraction ? '.' + fraction : '');
  }

  function describeMovement(m) {
    const item = element('li');
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
      element('span', 'id', m.to ? m.to : 'a new account'),
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
    try {
      const answer = await hak.post('/v1/approvals/' + encodeURIComponent(approval.id) + '/' + (approve ? 'approve' : 'deny'), note ? { note } : {});
      if (answer && answer.decision === 'awaiting') {
        // Counted: the call waits for the rest of the quorum; this approver cannot approve again.
        card.querySelector('button.deny').disabled = false;
        showQuorum(card, answer);
        hak.status('Approved as ' + answer.by + ': ' + answer.approvedBy.length + ' of ' + answer.quorum + ' approvers so far.');
      } else {
        card.remove();
        hak.status('');
      }
      hak.refresh();
    } catch (e) {
      buttons.forEach((b) => (b.disabled = false));
      hak.handle(e);
    }
  }

  // With a quorum over one: who approved so far, of how many.
  function showQuorum(node, approval) {
    const label = node.querySelector('.quorum');
    const by = approval.approvedBy || [];
    label.hidden = !(approval.quorum > 1);
    label.textContent = by.length
      ? 'approved by ' + by.join(', ') + ' (' + by.length + ' of ' + approval.quorum + ')'
      : 'needs ' + approval.quorum + ' approvers';
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
      element('span', 'quorum'),
    );
    const note = element('input');
    note.type = 'text';
    note.placeholder = 'note for the agent and the log (optional)';
    note.setAttribute('aria-label', 'note');
    const actions = element('div', 'decide');
    actions.append(
      note,
      button('approve', 'Approve', () => decide(node, approval, true)),
      button('deny', 'Deny', () => decide(node, approval, false)),
    );
    node.append(element('h3', null, approval.tool), meta, element('p', 'message', approval.message), ...describeCall(approval), actions);
    showQuorum(node, approval);
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
      else showQuorum(list.querySelector('[data-id="' + CSS.escape(approval.id) + '"]'), approval);
    }
    $('approvals-count').textContent = approvals.length ? '(' + approvals.length + ')' : '';
    $('approvals-empty').hidden = approvals.length > 0;
    tick();
  }

  hak.page('approvals', {
    start: () => setInterval(tick, 1000),
    refresh: async () => render((await hak.api('/v1/approvals')).approvals),
    clear: () => $('approvals').replaceChildren(),
  });
})();
