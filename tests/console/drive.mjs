// Drives hak's operator console in a real browser (Debian's chromium, headless, through
// puppeteer-core; no browser is downloaded) for tests/all/console.rs:
//
//   node drive.mjs <server base url> <admin token> approve|deny [--note TEXT] [--screenshot PNG]
//
// It opens /console, signs in first with a wrong token (the page must say it was refused), then
// with the right one, waits for the one parked call's card, prints what the card says, and
// approves or denies it with the note. Prints one JSON line: {refused, card, signInShown,
// signOutShown, after, errors, external}: the refusal shown, the card's text, which of the
// sign-in form and the sign-out button show once signed in, the list's text once decided,
// every page error or console error, and every request that left the server's origin.
import puppeteer from 'puppeteer-core';

const [base, token, action, ...rest] = process.argv.slice(2);
const option = (name) => {
  const at = rest.indexOf(name);
  return at >= 0 ? rest[at + 1] : undefined;
};
const note = option('--note');
const screenshot = option('--screenshot');

const browser = await puppeteer.launch({
  executablePath: process.env.HAK_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // Root in CI: chromium's sandbox needs user namespaces it may not have.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
const out = { errors: [], external: [] };
// While the wrong token is tried, the browser logs the 401 it gets: expected there only.
let wrongToken = false;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 760 });
  page.on('pageerror', (e) => out.errors.push('pageerror: ' + e.message));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (wrongToken && m.text().includes('status of 401')) return;
    out.errors.push('console: ' + m.text());
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(base + '/')) out.external.push(r.url());
  });
  page.on('requestfailed', (r) => out.errors.push('request failed: ' + r.url()));
  await page.goto(base + '/console', { waitUntil: 'load' });

  wrongToken = true;
  await page.type('#token', token + '-wrong');
  await page.click('#sign-in button');
  await page.waitForFunction(() => document.getElementById('status').textContent.includes('refused'), { timeout: 20000 });
  out.refused = await page.$eval('#status', (e) => e.textContent);
  wrongToken = false;

  await page.type('#token', token);
  await page.click('#sign-in button');
  await page.waitForSelector('#approvals .card', { timeout: 20000 });
  // One poll later the card is still the same node (a note being typed survives polls).
  await page.waitForFunction(() => /\d+:\d\d left/.test(document.querySelector('#approvals .card .left').textContent), { timeout: 5000 });
  out.card = await page.$eval('#approvals .card', (e) => e.innerText);
  // Signed in, the token's field is gone and the way to forget it is there.
  out.signInShown = await page.$eval('#sign-in', (e) => e.getClientRects().length > 0);
  out.signOutShown = await page.$eval('#signed-in', (e) => e.getClientRects().length > 0);
  if (note) await page.type('#approvals .card input', note);
  if (screenshot) await page.screenshot({ path: screenshot });
  await new Promise((r) => setTimeout(r, 1500));
  await page.click('#approvals .card button.' + action);
  await page.waitForFunction(() => document.querySelectorAll('#approvals .card').length === 0, { timeout: 20000 });
  await page.waitForFunction(() => !document.getElementById('approvals-empty').hidden, { timeout: 5000 });
  out.after = await page.$eval('#approvals-page', (e) => e.innerText);
} catch (e) {
  out.errors.push('driver: ' + e.message);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
