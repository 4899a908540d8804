// The Decisions page: the decision log's recent calls (the last 1,000 the server wrote),
// newest first, filtered by outcome, verdict, plugin, tool and agent; a call's whole line on
// a click.
'use strict';

(() => {
  const { $, element } = hak;
  const FILTERS = ['outcome', 'verdict', 'plugin', 'tool', 'agent'];
  // The line shown whole, by its time and context (kept across polls).
  let selected = null;

  const key = (line) => line.time + ' ' + line.context + ' ' + line.tool + ' ' + line.micros;

  function query() {
    const params = new URLSearchParams();
    for (const name of FILTERS) {
      const value = $('filter-' + name).value.trim();
      if (value) params.set(name, value);
    }
    params.set('limit', '200');
    return '/v1/decisions?' + params;
  }

  function steps(line) {
    if (!line.decisions.length) return 'no plugin step';
    return line.decisions
      .map((d) => d.plugin + ': ' + d.verdict + (d.enforce ? '' : ' (shadow)'))
      .join(', ');
  }

  function detail(line) {
    const box = $('decision-detail');
    if (!line) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    $('decision-detail-title').textContent = line.tool + ' at ' + line.time;
    const reasons = element('ul', 'facts');
    for (const d of line.decisions) {
      const item = element('li');
      item.append(
        element('strong', null, d.plugin),
        document.createTextNode(' ' + d.kind + ' at ' + d.stage + ': ' + d.verdict + (d.enforce ? '' : ' (shadow)')),
      );
      if (d.reason) item.append(element('div', 'sub', d.reason));
      if (d.approval) item.append(element('div', 'sub', 'approval: ' + d.approval.decision + (d.approval.by ? ' by ' + d.approval.by : '')));
      reasons.append(item);
    }
    const raw = element('pre', 'params', JSON.stringify(line, (k, v) => (typeof v === 'bigint' ? v.toString() : v), 2));
    $('decision-detail-body').replaceChildren(reasons, raw);
  }

  function row(line) {
    const tr = element('tr', 'clickable');
    tr.dataset.key = key(line);
    if (tr.dataset.key === selected) tr.classList.add('selected');
    tr.tabIndex = 0;
    const open = () => {
      selected = tr.dataset.key;
      for (const other of $('decisions').children) other.classList.toggle('selected', other === tr);
      detail(line);
    };
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') open();
    });
    tr.append(
      element('td', 'when', line.time.replace('T', ' ').replace(/\.\d+/, '')),
      element('td', null, line.agent || line.context),
      element('td', 'id', line.tool),
      element('td', 'outcome ' + line.outcome, line.outcome),
      element('td', null, steps(line)),
      element('td', 'num', String(line.chainVersion)),
      element('td', 'num', (line.micros / 1000).toFixed(1) + ' ms'),
    );
    return tr;
  }

  function render(body) {
    $('decisions-off').hidden = body.enabled;
    $('decisions-path').textContent = body.path ? 'from ' + body.path : '';
    $('decisions').replaceChildren(...body.decisions.map(row));
    $('decisions-empty').hidden = !body.enabled || body.decisions.length > 0;
    const shown = body.decisions.find((l) => key(l) === selected);
    if (selected && !shown) selected = null;
    detail(shown || null);
  }

  hak.page('decisions', {
    start: () => {
      for (const name of FILTERS) $('filter-' + name).addEventListener('change', () => hak.refresh());
      $('filters').addEventListener('submit', (e) => {
        e.preventDefault();
        hak.refresh();
      });
    },
    refresh: async () => render(await hak.api(query())),
    clear: () => {
      selected = null;
      $('decisions').replaceChildren();
      detail(null);
    },
  });
})();
