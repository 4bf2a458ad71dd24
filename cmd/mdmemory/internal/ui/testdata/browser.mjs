// The page of mdmemory ui in a real browser, as a person uses it. Run by
// TestBrowser (browser_test.go), which plants the memory, serves the page
// and passes, in the environment:
//
//   MDMEMORY_UI_URL            the page's address (http://127.0.0.1:PORT)
//   MDMEMORY_UI_TOKEN          the token to log in with, as mdmemory ui prints it
//   MDMEMORY_UI_DIR            the memory's folder, to check and change files by hand
//   MDMEMORY_CHROMIUM          the browser to launch (/usr/bin/chromium)
//   MDMEMORY_PLAYWRIGHT_CORE   the folder of playwright-core
//   MDMEMORY_SCREENSHOTS       a folder for a picture of each page, or empty
//   MDMEMORY_UI_OTHER          a page another local user serves on another
//                              port of this host (http://127.0.0.1:PORT/), which
//                              tries to read and change the memory
//
// It finds everything by accessible name and role (the names issue 25
// promises: "Search memory", "Save", "Restore", the page titles), never by
// CSS selector, and waits with Playwright's auto-waiting, never a fixed
// sleep. It prints a line per step and exits 1 with what failed.

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const env = (name) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is not set: run this script through TestBrowser`);
  return v;
};
const base = env('MDMEMORY_UI_URL');
const token = env('MDMEMORY_UI_TOKEN');
const dir = env('MDMEMORY_UI_DIR');
const shots = process.env.MDMEMORY_SCREENSHOTS || '';
const other = env('MDMEMORY_UI_OTHER');
const { chromium } = await import(pathToFileURL(path.join(env('MDMEMORY_PLAYWRIGHT_CORE'), 'index.mjs')).href);

const userFile = path.join(dir, 'facts', 'user.md');
const readUser = () => fs.readFileSync(userFile, 'utf8');

// check fails the step with what was expected and what there is.
function check(ok, what, got) {
  if (!ok) throw new Error(got === undefined ? what : `${what}; got:\n${got}`);
}

// visible waits for the locator to show, failing with what was awaited.
async function visible(locator, what) {
  try {
    await locator.first().waitFor({ state: 'visible' });
  } catch (e) {
    throw new Error(`${what} did not show: ${e.message.split('\n')[0]}`);
  }
}

// onPage waits for the page whose main heading is name, and checks that
// its title names it too.
async function onPage(page, name) {
  await visible(page.getByRole('heading', { level: 1, name }), `the heading "${name}"`);
  const title = await page.title();
  check(title.includes(typeof name === 'string' ? name : ''), `the title names the page "${name}"`, title);
}

// nav follows a link of the navigation bar.
async function nav(page, name) {
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();
  await onPage(page, name);
}

async function shot(page, name) {
  if (!shots) return;
  await page.screenshot({ path: path.join(shots, `${name}.png`), type: 'png', animations: 'disabled', caret: 'hide' });
}

// page is the one tab every step uses; a failure describes where it was.
let page;
let failed = false;
async function where() {
  if (!page) return '';
  try {
    const main = (await page.locator('body').innerText({ timeout: 2000 })).slice(0, 800);
    return `\n      at ${page.url()}, "${await page.title()}", which reads:\n${main.replace(/^/gm, '      | ')}`;
  } catch {
    return `\n      at ${page.url()}`;
  }
}
async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok    ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    console.log(`FAIL  ${name} (${Date.now() - t0} ms): ${e.message}${await where()}`);
    failed = true;
    throw e;
  }
}

// What must not happen on any page: a script error, a console error (a
// refused script or style, under the page's Content-Security-Policy), a
// request to anywhere but the page's own server, a dialog.
const problems = [];
let allowConflict = false; // the conflict step expects a 409
let allowLogin = false; // the login step expects a 401

const started = Date.now();
const browser = await chromium.launch({
  executablePath: env('MDMEMORY_CHROMIUM'),
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--no-first-run', '--disable-quic', '--disable-sync'],
});
console.log(`ok    launch Chromium ${browser.version()} (${Date.now() - started} ms)`);
try {
  const context = await browser.newContext({ viewport: { width: 1000, height: 700 }, deviceScaleFactor: 1, locale: 'en-US' });
  context.setDefaultTimeout(15000);
  page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`script error on ${page.url()}: ${e.message}`));
  page.on('console', (m) => {
    // A failed response is judged below, by its address and status.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console error on ${page.url()}: ${m.text()}`);
  });
  page.on('response', (r) => {
    const p = new URL(r.url()).pathname;
    // The browser asks for /favicon.ico on its own; the page has none.
    if (r.status() >= 400 && p !== '/favicon.ico' && !(r.status() === 409 && allowConflict) && !(r.status() === 401 && allowLogin)) problems.push(`${r.status()} from ${r.request().method()} ${r.url()}`);
  });
  page.on('request', (r) => { if (!r.url().startsWith(base + '/')) problems.push(`a request outside the page: ${r.url()}`); });
  page.on('dialog', (d) => { problems.push(`a dialog: ${d.message()}`); d.dismiss(); });

  await step('log in: without the token, the login page', async () => {
    allowLogin = true;
    await page.goto(base + '/');
    await onPage(page, 'Log in');
    await visible(page.getByLabel('Token'), 'the token box');
    allowLogin = false;
  });

  await step('open the Overview with the login address; the token leaves it', async () => {
    await page.goto(base + '/?token=' + encodeURIComponent(token));
    await onPage(page, 'Overview');
    // The session's pages are under a path of its own, which its cookie
    // is scoped to.
    check(/^\/s\/[A-Za-z0-9_-]{43}\/$/.test(page.url().slice(base.length)), 'the address without the token, under the session\'s path', page.url());
    await visible(page.getByRole('heading', { name: 'Budgets' }), 'the budgets');
    await visible(page.getByRole('meter', { name: 'Facts' }), 'the facts gauge');
    await visible(page.getByRole('table').getByRole('cell', { name: 'agent', exact: true }), 'a change by the agent in Last changes');
    await shot(page, 'overview');
  });

  await step('search a planted word, open the result', async () => {
    await nav(page, 'Search');
    const box = page.getByLabel('Search memory');
    await box.fill('zeppelin');
    await box.press('Enter');
    await page.waitForURL(/\/search\?q=zeppelin/);
    const results = page.getByRole('main').getByRole('listitem');
    await visible(results.filter({ hasText: 'Flaky cache test in apollo' }), 'the result "Flaky cache test in apollo"');
    const hits = await results.count();
    check(hits === 1, 'one result for zeppelin', String(hits));
    await visible(results.getByRole('mark').filter({ hasText: /^zeppelin$/i }), 'zeppelin marked in the result');
    await results.getByRole('link', { name: 'Flaky cache test in apollo' }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Flaky cache test in apollo' }), 'the entry');
    check((await page.title()).includes('Entry'), 'the title names the entry page', await page.title());
    await visible(page.getByText('the zeppelin cache test raced on the wall clock'), "the entry's summary");
    await visible(page.getByText('inject the clock instead of sleeping in tests'), "the entry's lesson");
  });

  await step('search Chinese words, see them marked', async () => {
    await nav(page, 'Search');
    const box = page.getByLabel('Search memory');
    await box.fill('酒店');
    await box.press('Enter');
    await page.waitForURL(/\/search\?q=/);
    const results = page.getByRole('main').getByRole('listitem');
    await visible(results.filter({ hasText: '东京酒店比价' }), 'the result "东京酒店比价"');
    await visible(results.getByRole('mark').filter({ hasText: '酒店' }), '酒店 marked');
  });

  await step('search with several results (the Search picture)', async () => {
    const box = page.getByLabel('Search memory');
    await box.fill('Tokyo');
    await box.press('Enter');
    await page.waitForURL(/\/search\?q=Tokyo/);
    const results = page.getByRole('main').getByRole('listitem');
    await visible(results.filter({ hasText: 'Ramen in Tokyo' }), 'the result "Ramen in Tokyo"');
    const hits = await results.count();
    check(hits >= 2, 'several results for Tokyo', String(hits));
    await shot(page, 'search');
  });

  await step('timeline: months newest first', async () => {
    await nav(page, 'Timeline');
    const months = page.getByRole('main').getByRole('heading', { level: 2 });
    await visible(months.first(), 'a month');
    const names = await months.allTextContents();
    check(names.join(',') === '2026-03,2026-02,2026-01', 'the three months, newest first', names.join(','));
    await visible(page.getByRole('heading', { name: '东京酒店比价' }), 'the entry in Chinese');
    await shot(page, 'timeline');
  });

  await step('edit a fact, find it on disk', async () => {
    await nav(page, 'Facts');
    await shot(page, 'facts');
    const form = page.getByRole('form', { name: 'Line 6 of facts/user.md' });
    const line = form.getByRole('textbox');
    check(await line.inputValue() === '- City: Shanghai', 'line 6 is the city', await line.inputValue());
    await line.fill('- City: Hangzhou, since March 2026');
    await form.getByRole('button', { name: 'Save' }).click();
    await visible(page.getByRole('status').filter({ hasText: 'Saved.' }), 'the notice "Saved."');
    await onPage(page, 'Facts');
    check(readUser().includes('\n- City: Hangzhou, since March 2026\n'), 'the new line on disk', readUser());
    check(!readUser().includes('- City: Shanghai\n'), 'the old line gone from disk', readUser());
  });

  await step('save over a change made by hand: the conflict, then the merge', async () => {
    await page.reload();
    await onPage(page, 'Facts');
    // A person changes the file in an editor while the page shows it.
    fs.writeFileSync(userFile, readUser().replace('- City: Hangzhou, since March 2026\n', '- City: Hangzhou, since March 2026\n- Pet: a cat named Mochi\n'));
    const form = page.getByRole('form', { name: 'Line 5 of facts/user.md' });
    await form.getByRole('textbox').fill('- Name: Zhang San (张三)');
    allowConflict = true;
    await form.getByRole('button', { name: 'Save' }).click();
    await visible(page.getByRole('heading', { level: 1, name: /^Conflict: facts\/user\.md changed since you loaded it/ }), 'the conflict');
    await visible(page.getByRole('alert').filter({ hasText: 'Nothing was saved.' }), 'the words "Nothing was saved."');
    const theirs = page.getByRole('region', { name: 'Theirs now' });
    const yours = page.getByRole('region', { name: 'Yours', exact: true });
    await visible(theirs.getByText('- Pet: a cat named Mochi'), "the hand's change in Theirs now");
    check(!(await theirs.textContent()).includes('张三'), 'Theirs now without the page\'s change', await theirs.textContent());
    await visible(yours.getByText('- Name: Zhang San (张三)'), "the page's change in Yours");
    check(readUser().includes('Mochi') && !readUser().includes('张三'), 'the hand\'s change kept on disk, nothing saved', readUser());
    const merged = page.getByLabel('Merged text of facts/user.md');
    const text = await merged.inputValue();
    check(text.includes('- Pet: a cat named Mochi\n') && text.includes('- Name: Zhang San (张三)\n'), 'the merge holds both changes', text);
    await merged.fill(text.replace('a cat named Mochi', 'a black cat named Mochi'));
    await page.getByRole('form', { name: 'Merge facts/user.md' }).getByRole('button', { name: 'Save' }).click();
    await visible(page.getByRole('status').filter({ hasText: 'Saved.' }), 'the notice "Saved."');
    allowConflict = false;
    const now = readUser();
    check(now.includes('- Pet: a black cat named Mochi\n') && now.includes('- Name: Zhang San (张三)\n') && now.includes('Hangzhou, since March 2026'), 'the merge on disk', now);
  });

  await step('restore an earlier version from History, find it on disk', async () => {
    await nav(page, 'History');
    await page.getByLabel('File').selectOption('facts/user.md');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/\/history\?path=facts%2Fuser\.md/);
    await onPage(page, 'History');
    const changes = page.getByRole('article');
    // Every change shown is of facts/user.md, each with who made it.
    await visible(changes.filter({ hasText: 'by someone outside the library' }), 'the change made by hand, named as such');
    await visible(changes.filter({ hasText: 'by ui' }), "the page's changes, made by ui");
    // The agent's first version: the one change that added the green tea.
    const first = changes.filter({ hasText: '+- Tea: green tea, no sugar' });
    check(await first.count() === 1, 'one change that wrote the first version', String(await first.count()));
    check(await changes.getByRole('button', { name: 'Restore' }).count() === await changes.count(), 'a Restore button on each change');
    await first.getByRole('button', { name: 'Restore' }).click();
    // First what the restore would change, from the file now to that
    // version; nothing is restored yet.
    await onPage(page, /^Restore facts\/user\.md to version/);
    await visible(page.getByRole('main').getByText('+- Tea: green tea, no sugar'), 'the tea line the restore brings back');
    await visible(page.getByRole('main').getByText('-- Pet: a black cat named Mochi'), 'the pet line the restore removes');
    check(readUser().includes('Mochi'), 'nothing restored before the confirmation', readUser());
    await page.getByRole('main').getByRole('button', { name: 'Restore' }).click();
    await visible(page.getByRole('status').filter({ hasText: 'Restored' }), 'the notice "Restored"');
    const now = readUser();
    check(now.includes('- Tea: green tea, no sugar\n') && now.includes('- City: Shanghai\n'), 'the first version on disk', now);
    check(!now.includes('Mochi') && !now.includes('Longjing'), 'the later lines gone from disk', now);
    await visible(changes.filter({ hasText: 'restore' }).filter({ hasText: 'by ui' }), 'the restore in the history');
    await shot(page, 'history');
  });

  await step('a page on another port of this host reaches nothing of the page', async () => {
    // Logged in, the person opens a page another local user serves on
    // another port: it asks the browser for an image of its own (to see
    // the cookies that come with it, and replay them), and for the page's
    // Facts and a save, with the browser's cookies. TestBrowser checks what
    // it got.
    const tab = await context.newPage();
    await tab.goto(other);
    await tab.waitForFunction(() => document.title === 'done');
    const tried = await tab.evaluate(() => window.tried);
    check(tried.length >= 4, 'the other page tried its requests', JSON.stringify(tried));
    await tab.close();
    // The page still works for the person.
    await nav(page, 'Facts');
  });

  check(problems.length === 0, `nothing amiss on the pages:\n${problems.join('\n')}`);
  await context.close();
} catch (e) {
  if (!failed) console.log(`FAIL  ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
console.log(`${process.exitCode ? 'FAIL' : 'ok'}    all (${Date.now() - started} ms)`);
