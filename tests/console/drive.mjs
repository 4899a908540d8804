// Drives hak's operator console in a real browser (Debian's chromium, headless, through
// puppeteer-core; no browser is downloaded) for tests/all/console.rs:
//
//   node drive.mjs <server base url> <admin token> approve|deny [--note TEXT] [--approver] [--screenshot PNG]
//   node drive.mjs <server base url> <admin token> chain <plugin> [--screenshot PNG]
//   node drive.mjs <server base url> <admin token> decisions [--screenshot PNG]
//   node drive.mjs <server base url> <admin token> metrics <plugin> [--screenshot PNG]
//
// approve|deny: opens /console, signs in first with a wrong token (the page must say it was
// refused), then with the right one, waits for the one parked call's card, and approves or
// denies it with the note. Reports {refused, card, signInShown, signOutShown, pauseShown,
// after}: the refusal shown, the card's text, which of the sign-in form, the sign-out button
// and the kill switch show once signed in, the list's text once decided. --approver: the token
// is an approver's (the admin routes but approvals refuse it, and the browser logs that).
//
// approve-once: as approve, with an approver's key where more approvers must approve: approves
// the card and waits for the page to say so. Reports {card, status, quorum}: the card's text
// before, the status line, the card's quorum label after.
//
// chain: opens /console#chain signed in, reads the chain, asks to roll <plugin> back, cancels,
// asks again and confirms. Reports {before, confirm, after, status}: the table's text with
// its version before, the confirmation asked, the table after, the page's status line.
//
// decisions: opens /console#decisions signed in, waits for two calls, filters the blocked
// ones and opens the one left. Reports {table, filtered, detail}: the table's text, the table
// once filtered, the call's detail.
//
// metrics: opens /console#metrics signed in while the test keeps calling, waits until the
// calls chart has drawn a rate above zero from at least four samples, then chooses <plugin>.
// Reports {charts, lines, plugins, chosen}: the charts' text, how many lines they drew, the
// plugins offered, and the step-time chart's text once <plugin> is chosen.
//
// pause <reason>: opens /console signed in, pauses with <reason> through the kill switch and
// waits for the banner. Reports {banner, formShown}: the banner's text, whether the pause form
// still shows.
//
// resume: opens /console signed in, waits for the banner, clicks Resume (the button then asks
// to confirm), confirms, and waits for the banner to go. Reports {asked, banner, formShown}.
//
// All report every page error or console error (`errors`) and every request that left the
// server's origin (`external`), as one JSON line.
import puppeteer from 'puppeteer-core';

const [base, token, action, ...rest] = process.argv.slice(2);
const option = (name) => {
  const at = rest.indexOf(name);
  return at >= 0 ? rest[at + 1] : undefined;
};

const browser = await puppeteer.launch({
  executablePath: process.env.HAK_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // Root in CI: chromium's sandbox needs user namespaces it may not have.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
const out = { errors: [], external: [] };
// While the wrong token is tried, the browser logs the 401 it gets: expected there only.
let wrongToken = false;
// An approver's key is refused by the admin routes other than approvals (the browser logs
// each refused request): expected in that session only.
const approverKey = action === 'approve-once' || rest.includes('--approver');

const text = (page, selector) => page.$eval(selector, (e) => e.innerText);
const shown = (page, selector) => page.$eval(selector, (e) => e.getClientRects().length > 0);

async function signIn(page, secret) {
  await page.type('#token', secret);
  await page.click('#sign-in button');
}

async function approvals(page) {
  wrongToken = true;
  await signIn(page, token + '-wrong');
  await page.waitForFunction(() => document.getElementById('status').textContent.includes('refused'), { timeout: 20000 });
  out.refused = await text(page, '#status');
  wrongToken = false;

  await signIn(page, token);
  await page.waitForSelector('#approvals .card', { timeout: 20000 });
  // One poll later the card is still the same node (a note being typed survives polls).
  await page.waitForFunction(() => /\d+:\d\d left/.test(document.querySelector('#approvals .card .left').textContent), { timeout: 5000 });
  out.card = await text(page, '#approvals .card');
  // Signed in, the token's field is gone and the way to forget it is there.
  out.signInShown = await shown(page, '#sign-in');
  out.signOutShown = await shown(page, '#signed-in');
  // The kill switch shows to the admin (the wrong token refused before is forgotten).
  out.pauseShown = await page
    .waitForFunction(() => !document.getElementById('pause-controls').hidden, { timeout: 5000 })
    .then(() => true, () => false);
  const note = option('--note');
  if (note) await page.type('#approvals .card input', note);
  if (option('--screenshot')) await page.screenshot({ path: option('--screenshot') });
  await new Promise((r) => setTimeout(r, 1500));
  await page.click('#approvals .card button.' + action);
  await page.waitForFunction(() => document.querySelectorAll('#approvals .card').length === 0, { timeout: 20000 });
  await page.waitForFunction(() => !document.getElementById('approvals-empty').hidden, { timeout: 5000 });
  out.after = await text(page, '#approvals-page');
}

async function approveOnce(page) {
  await page.goto(base + '/console', { waitUntil: 'load' });
  await signIn(page, token);
  await page.waitForSelector('#approvals .card', { timeout: 20000 });
  out.card = await text(page, '#approvals .card');
  await page.click('#approvals .card button.approve');
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Approved as'), { timeout: 20000 });
  out.status = await text(page, '#status');
  await page.waitForFunction(() => document.querySelector('#approvals .card .quorum').textContent.startsWith('approved by'), { timeout: 5000 });
  out.quorum = await text(page, '#approvals .card .quorum');
  out.approveEnabled = await page.$eval('#approvals .card button.approve', (b) => !b.disabled);
  // Another page refuses an approver's key without signing it out.
  await page.goto(base + '/console#chain', { waitUntil: 'load' });
  await page.waitForFunction(() => document.getElementById('status').textContent.includes("approver's"), { timeout: 20000 });
  out.elsewhere = await text(page, '#status');
  out.signOutShown = await shown(page, '#signed-in');
  if (option('--screenshot')) await page.screenshot({ path: option('--screenshot') });
}

async function chain(page, plugin) {
  await page.goto(base + '/console#chain', { waitUntil: 'load' });
  await signIn(page, token);
  const row = '#chain tr[data-name="' + plugin + '"]';
  await page.waitForSelector(row, { timeout: 20000 });
  out.approvalsShown = await shown(page, '#approvals-page');
  out.before = await text(page, '#chain-page');
  // Asked, then cancelled: nothing changes.
  await page.click(row + ' .actions button');
  await page.waitForSelector(row + ' .confirm', { timeout: 5000 });
  out.confirm = await text(page, row + ' .confirm');
  if (option('--screenshot')) await page.screenshot({ path: option('--screenshot') });
  await page.click(row + ' .actions button:last-child');
  await page.waitForFunction((r) => !document.querySelector(r + ' .confirm'), { timeout: 5000 }, row);
  // Asked again, and confirmed.
  await page.click(row + ' .actions button');
  await page.waitForSelector(row + ' .confirm', { timeout: 5000 });
  await page.click(row + ' .actions button.deny');
  await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Rolled back'), { timeout: 20000 });
  out.status = await text(page, '#status');
  out.after = await text(page, '#chain-page');
}

async function decisions(page) {
  await page.goto(base + '/console#decisions', { waitUntil: 'load' });
  await signIn(page, token);
  await page.waitForFunction(() => document.querySelectorAll('#decisions tr').length >= 2, { timeout: 20000 });
  out.table = await text(page, '#decisions-page table');
  await page.select('#filter-outcome', 'blocked');
  await page.waitForFunction(() => document.querySelectorAll('#decisions tr').length === 1, { timeout: 20000 });
  out.filtered = await text(page, '#decisions-page table');
  await page.click('#decisions tr');
  await page.waitForSelector('#decision-detail:not([hidden])', { timeout: 5000 });
  // Polls go on; the detail stays open on the same call.
  await new Promise((r) => setTimeout(r, 1500));
  out.detail = await text(page, '#decision-detail');
  if (option('--screenshot')) await page.screenshot({ path: option('--screenshot'), fullPage: true });
}

async function pause(page, reason) {
  await page.goto(base + '/console', { waitUntil: 'load' });
  await signIn(page, token);
  await page.waitForSelector('#pause-controls:not([hidden])', { timeout: 20000 });
  await page.type('#pause-reason', reason);
  await page.click('#pause-controls button');
  await page.waitForSelector('#paused:not([hidden])', { timeout: 20000 });
  out.banner = await text(page, '#paused-text');
  out.formShown = await shown(page, '#pause-controls');
  if (option('--screenshot')) await page.screenshot({ path: option('--screenshot') });
}

async function resume(page) {
  await page.goto(base + '/console', { waitUntil: 'load' });
  await signIn(page, token);
  await page.waitForSelector('#paused:not([hidden])', { timeout: 20000 });
  await page.click('#resume');
  out.asked = await text(page, '#resume');
  await page.click('#resume');
  await page.waitForSelector('#paused', { hidden: true, timeout: 20000 });
  out.banner = await text(page, '#paused-text');
  out.formShown = await shown(page, '#pause-controls');
}

async function metrics(page, plugin) {
  await page.goto(base + '/console#metrics', { waitUntil: 'load' });
  await signIn(page, token);
  await page.waitForFunction(() => {
    const latest = document.querySelector('#chart-calls .latest');
    const samples = parseInt(document.getElementById('metrics-samples').textContent, 10);
    return latest && samples >= 4 && /calls [1-9]/.test(latest.textContent);
  }, { timeout: 30000 });
  out.charts = await text(page, '.charts');
  out.lines = await page.$$eval('.charts polyline', (l) => l.length);
  out.plugins = await page.$$eval('#metrics-plugin option', (o) => o.map((x) => x.value));
  await page.select('#metrics-plugin', plugin);
  await page.waitForFunction((p) => document.querySelector('#chart-latency h3').textContent.includes(p), { timeout: 5000 }, plugin);
  out.chosen = await text(page, '#chart-latency');
  if (option('--screenshot')) await page.screenshot({ path: option('--screenshot'), fullPage: true });
}

try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 720 });
  page.on('pageerror', (e) => out.errors.push('pageerror: ' + e.message));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if ((wrongToken || approverKey) && m.text().includes('status of 401')) return;
    out.errors.push('console: ' + m.text());
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(base + '/')) out.external.push(r.url());
  });
  page.on('requestfailed', (r) => out.errors.push('request failed: ' + r.url()));
  if (action === 'chain') {
    await chain(page, rest[0]);
  } else if (action === 'decisions') {
    await decisions(page);
  } else if (action === 'metrics') {
    await metrics(page, rest[0]);
  } else if (action === 'approve-once') {
    await approveOnce(page);
  } else if (action === 'pause') {
    await pause(page, rest[0]);
  } else if (action === 'resume') {
    await resume(page);
  } else {
    await page.goto(base + '/console', { waitUntil: 'load' });
    await approvals(page);
  }
} catch (e) {
  out.errors.push('driver: ' + e.message);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
