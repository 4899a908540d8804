// The Chain page: the running chain's plugins in order, with where each came from, what it
// is (OCI digest or sha256), its stages, counters, shadow mode and tripped contexts, and a
// roll back per plugin that the operator confirms first. The version shown is the one the
// list belongs to (GET /v1/plugins is one snapshot per chain version).
'use strict';

(() => {
  const { $, element, button } = hak;
  // The plugin whose roll back awaits confirmation (kept across polls).
  let confirming = null;

  function stages(p) {
    const parts = [];
    if (p.hookStages.length) parts.push('hooks: ' + p.hookStages.join(', '));
    if (p.policyStages.length) parts.push('policies: ' + p.policyStages.join(', '));
    return parts.join('; ') || 'none';
  }

  async function rollBack(name) {
    confirming = null;
    try {
      const done = await hak.post('/v1/plugins/' + encodeURIComponent(name) + '/rollback');
      hak.status('Rolled back ' + name + ': chain version ' + done.chainVersion + '.');
      await hak.refresh();
    } catch (e) {
      hak.handle(e);
    }
  }

  function actions(p) {
    const cell = element('td', 'actions');
    if (!p.canRollBack) return cell;
    if (confirming === p.name) {
      cell.append(
        element('span', 'confirm', 'Roll back ' + p.name + ' to its previous version?'),
        button('deny', 'Roll back', () => rollBack(p.name)),
        button(null, 'Cancel', () => {
          confirming = null;
          hak.refresh();
        }),
      );
    } else {
      cell.append(
        button(null, 'Roll back…', () => {
          confirming = p.name;
          hak.refresh();
        }),
      );
    }
    return cell;
  }

  function row(p, at) {
    const tr = element('tr');
    tr.dataset.name = p.name;
    const name = element('td');
    name.append(element('strong', null, p.name), element('div', 'sub', p.pluginName));
    const source = element('td');
    source.append(element('div', null, p.source));
    if (p.reference) source.append(element('div', 'sub id', p.reference));
    const what = element('td', 'id', p.digest ? p.digest.slice(0, 19) + '…' : 'sha256:' + p.sha256.slice(0, 12) + '…');
    what.title = p.digest || 'sha256:' + p.sha256;
    const mode = element('td', null, p.enforce ? 'enforced' : 'shadow: would block ' + p.wouldBlock);
    const tripped = element('td', null, p.trippedContexts.length ? p.trippedContexts.join(', ') : '—');
    tr.append(
      element('td', 'num', String(at + 1)),
      name,
      source,
      what,
      element('td', null, stages(p)),
      element('td', 'num', String(p.calls)),
      element('td', 'num', String(p.blocks)),
      element('td', 'num', String(p.errors)),
      mode,
      tripped,
      actions(p),
    );
    return tr;
  }

  function render(body) {
    $('chain-version').textContent = 'version ' + body.chainVersion;
    $('chain').replaceChildren(...body.plugins.map(row));
    $('chain-empty').hidden = body.plugins.length > 0;
  }

  hak.page('chain', {
    refresh: async () => render(await hak.api('/v1/plugins')),
    clear: () => {
      confirming = null;
      $('chain').replaceChildren();
      $('chain-version').textContent = '';
    },
    hide: () => (confirming = null),
  });
})();
