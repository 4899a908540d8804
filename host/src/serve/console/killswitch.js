// The kill switch, above every page: while hak is paused, a banner says why, who and since
// when, with Resume (asked twice: resuming lets calls move value again); otherwise Pause with a
// reason. Shown to the admin only (an approver's key reads approvals, not the switch).
'use strict';

(() => {
  const { $ } = hak;
  let confirmUntil = 0;
  // Refused once (an approver's key): not asked again until the next sign-in.
  let refused = false;

  async function refresh() {
    if (refused) return;
    const asked = hak.session();
    let state;
    try {
      state = await hak.api('/v1/pause');
    } catch (e) {
      // Refused under a token since replaced: the new one is asked afresh.
      if (asked !== hak.session()) return;
      refused = true;
      hide();
      return;
    }
    if (asked !== hak.session()) return;
    $('pause-controls').hidden = state.paused;
    $('paused').hidden = !state.paused;
    if (state.paused) {
      const p = state.pause;
      $('paused-text').textContent =
        'Paused by ' + p.by + (p.at ? ' at ' + p.at : '') + ': ' + p.reason +
        '. Nothing that changes the ledger runs; queries answer.';
    } else {
      confirmUntil = 0;
      $('resume').textContent = 'Resume';
    }
  }

  function hide() {
    $('paused').hidden = true;
    $('pause-controls').hidden = true;
  }

  function clear() {
    refused = false;
    hide();
  }

  async function change(path, body, done) {
    try {
      await hak.post(path, body);
      hak.status(done);
      await refresh();
    } catch (e) {
      hak.handle(e);
    }
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('pause-controls').addEventListener('submit', (event) => {
      event.preventDefault();
      const reason = $('pause-reason').value.trim();
      if (!reason) return;
      $('pause-reason').value = '';
      change('/v1/pause', { reason }, 'Paused: calls that change the ledger are blocked.');
    });
    $('resume').addEventListener('click', () => {
      if (Date.now() > confirmUntil) {
        confirmUntil = Date.now() + 5000;
        $('resume').textContent = 'Confirm: resume calls';
        return;
      }
      confirmUntil = 0;
      $('resume').textContent = 'Resume';
      change('/v1/resume', {}, 'Resumed: calls run again.');
    });
  });

  hak.widget({ refresh, clear });
})();
