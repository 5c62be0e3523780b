// The dashboard in a real browser: Debian's chromium, driven headless by playwright-core (a
// test peer, never a browser download), checked by axe-core. tests/e2e/ui_test.cpp prepares a
// repository with a live race and starts `cocode-dispatch ui`; this script looks at it as a
// person would and says what it found. Every wait is for something on the page, bounded.
//   node browser.mjs SCENARIO_JSON
// SCENARIO_JSON: {peers, chromium, url, token, readOnlyUrl, artifacts,
//                 race: {id, folder}, stopped: {id}, quiet: {id}}, or {peers, chromium, url, artifacts,
//                 smoke: true} for the page alone (serve's /ui).
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const require = createRequire(`${scenario.peers}/node_modules/`);
const { chromium } = require("playwright-core");
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  console.log(`${ok ? "ok" : "FAILED"} ${what}`);
};
const origin = new URL(scenario.url).origin;
const base = new URL(scenario.url).pathname; // "/" or "/ui/"
mkdirSync(scenario.artifacts, { recursive: true });

// ---- the browser ------------------------------------------------------------------------
const browser = await chromium.launch({
  executablePath: scenario.chromium,
  headless: true,
  args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
});
const problems = []; // console errors, page errors, dialogs, failed requests: none expected
const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
async function open(url) {
  const page = await context.newPage();
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("dialog", async (d) => {
    problems.push(`dialog: ${d.message()}`);
    await d.dismiss();
  });
  page.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()} ${r.url()}`));
  await page.goto(url);
  return page;
}
async function accessible(page, what) {
  await page.evaluate(axeSource); // by the DevTools protocol: the page's CSP stays as it is
  const result = await page.evaluate(() =>
    window.axe.run(document, { resultTypes: ["violations"] }));
  const serious = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  check(serious.length === 0, `axe-core finds no serious violation on ${what}` +
    (serious.length ? `: ${serious.map((v) => `${v.id} (${v.nodes.map((n) => n.target).join(" ")})`).join("; ")}` : ""));
}
const shot = (page, name) => page.screenshot({ path: `${scenario.artifacts}/${name}.png`, fullPage: true });
const waitFor = (page, selector, what, timeout = 30000) =>
  page.waitForSelector(selector, { timeout }).then(() => true, () => false).then((ok) => check(ok, what));

// Under `serve` (its /ui), the page itself: it loads, goes live, and draws the races with no
// console error and nothing an accessibility check finds serious.
if (scenario.smoke) {
  try {
    const page = await open(scenario.url);
    await waitFor(page, "#live.on", "the page under /ui goes live");
    await waitFor(page, "main h1", "it draws the races");
    await accessible(page, "the page under /ui");
    await shot(page, "serve-ui");
  } finally {
    await browser.close();
  }
  check(problems.length === 0, "no console error, page error, dialog or failed request" +
    (problems.length ? `: ${problems.join(" | ")}` : ""));
  if (failures.length) process.exit(1);
  process.exit(0);
}

// ---- the server without a browser: the token, and actions only by POST with it ----------
const api = (path, init = {}) => fetch(`${origin}${base}api/${path}`, init);
const bearer = { Authorization: `Bearer ${scenario.token}` };
check((await api("runs")).status === 401, "a request without the token gets 401");
check((await api("runs", { headers: { Authorization: "Bearer not-the-token" } })).status === 401,
  "a request with a wrong token gets 401");
check((await api(`runs/${scenario.stopped.id}/stop`, { method: "POST" })).status === 401,
  "a stop POST without the token is refused (401)");
check((await api(`runs/${scenario.stopped.id}/stop`, { method: "GET", headers: bearer })).status !== 202,
  "a stop is never a GET");
const stillRunning = await (await api("runs", { headers: bearer })).json();
check(stillRunning.runs.find((r) => r.run_id === scenario.stopped.id)?.status === "running",
  "the run a refused POST named is still running");
const page0 = await fetch(`${origin}${base}`);
check((page0.headers.get("content-security-policy") || "").includes("script-src 'self'") &&
  !(page0.headers.get("content-security-policy") || "").includes("unsafe-inline"),
  "the page's Content-Security-Policy allows no inline script");
let total = 0;
for (const name of ["", "app.js", "app.css", "icon.svg"]) {
  const res = await fetch(`${origin}${base}${name}`);
  const body = await res.text();
  check(!body.includes(scenario.token), `no token in ${name || "index.html"}`);
  total += Buffer.byteLength(body);
}
check(total <= 300 * 1024, `the page is ${total} bytes (at most 300 KB)`);

try {
  const page = await open(scenario.url);
  check(!page.url().includes(scenario.token), "the token leaves the address bar once read");
  const raceRow = `tr[data-run="${scenario.race.id}"]`;
  await waitFor(page, `${raceRow}[data-state="running"]`, "the race shows the agent running");
  await page.evaluate(() => { window.notReloaded = true; });

  // The hostile title: its characters, no element, no script.
  const titles = await page.$$eval("section[data-issue] h2", (hs) => hs.map((h) => h.textContent));
  check(titles.some((t) => t.includes("<img src=x onerror=alert(1)>")),
    "the hostile title shows as its characters");
  check(titles.some((t) => t.includes("\\e[31m")), "its terminal escape shows as \\e[31m, as `status` shows it");
  check(await page.$$eval("img", (imgs) => imgs.every((i) => i.getAttribute("src") !== "x")),
    "the hostile title created no element");
  await shot(page, "races-running");
  await accessible(page, "the races");
  // Each run with its start and an id `logs` takes; a race's newest run first.
  const cells = await page.$$eval(`${raceRow} td`, (tds) => tds.map((td) => td.textContent));
  check(/\d\d:\d\d:\d\d/.test(cells[1]), `the race shows when the run started (${cells[1]})`);
  check(scenario.race.id.startsWith(cells[2]) && cells[2].length >= 15, `… and its id's start (${cells[2]})`);
  const order = await page.$$eval(`section[data-issue] tbody tr`, (trs) => trs.map((tr) => tr.dataset.run));
  const started = Object.fromEntries((await (await api("runs", { headers: bearer })).json()).runs
    .map((r) => [r.run_id, r.start_time]));
  check(order.every((id, i) => i === 0 || started[order[i - 1]] >= started[id]), "a race lists its newest run first");
  check((await page.textContent("#races-summary")).includes("2 running"), "the summary counts the two runs running");
  // Opened in a new tab, a run's page asks the open tab for the token instead of the person.
  const second = await open(`${origin}${base}#/run/${encodeURIComponent(scenario.race.id)}`);
  await waitFor(second, "#log", "a run's page opened in a new tab gets the token from the open one");
  await second.close();

  // The race moves: READY when the agent commits with the marker, PASS once judged.
  writeFileSync(`${scenario.race.folder}/go`, "");
  await waitFor(page, `${raceRow}[data-state="READY"]`, "the run turns READY without a reload");
  await shot(page, "races-ready");
  writeFileSync(`${scenario.race.folder}/end`, "");
  await waitFor(page, `${raceRow}[data-verdict="PASS"]`, "the run turns PASS without a reload", 60000);
  check(await page.evaluate(() => window.notReloaded === true), "the page was never reloaded");
  await shot(page, "races-pass");

  // Stop, from the race's row: a POST with the token; the run ends interrupted.
  const stoppedRow = `tr[data-run="${scenario.stopped.id}"]`;
  await page.click(`${stoppedRow} button`);
  await waitFor(page, `${stoppedRow}[data-state="failed"]`, "Stop ends the other run");
  check((await page.textContent(stoppedRow)).includes("interrupted"), "… as interrupted, as Ctrl-C would");
  await page.waitForFunction(() => document.querySelector("#races-summary").textContent.includes(" 0 running"),
    null, { timeout: 10000 }).then(() => check(true, "the summary follows the runs live"),
    () => check(false, "the summary follows the runs live"));

  // The run's page: its log (as `logs` renders it), verdict, diff, egress, rounds.
  await page.click(`${raceRow} a`);
  await page.waitForSelector("#log");
  await page.waitForFunction(() => document.querySelector("#log").textContent.includes("working on it"),
    null, { timeout: 30000 }).then(() => check(true, "the run's log shows its output"),
    () => check(false, "the run's log shows its output"));
  await waitFor(page, "#verdict.v-PASS", "the run's page shows PASS");
  await page.click("#tab-1");
  await page.waitForFunction(() => document.querySelector("#panel-1").textContent.includes("PASS"),
    null, { timeout: 10000 }).then(() => check(true, "its verdict is shown"),
    () => check(false, "its verdict is shown"));
  // A table of the checks drawn from check.json, each result in words: no Markdown source, no
  // emoji (which are boxes without an emoji font).
  const verdictText = await page.textContent("#panel-1");
  check((await page.$$("#panel-1 table#checks tbody tr")).length >= 4, "the verdict is a table of its checks");
  check(verdictText.includes("✓ pass") && verdictText.includes("ready marker"), "… each with its result in words");
  check(!/[|`✅❌]/.test(verdictText), "… and no Markdown nor emoji in it");
  await shot(page, "run-verdict");
  await page.click("#tab-2");
  check((await page.textContent("#panel-2")).includes("file.txt"), "its diff names the changed file");
  await shot(page, "run-diff");
  await page.click("#tab-0");
  await shot(page, "run-log");
  // The run's id on one line, even on a phone's width (it wrapped at its hyphens).
  await page.setViewportSize({ width: 390, height: 860 });
  const idRects = await page.$$eval("main span.mono", (spans, id) => spans
    .filter((s) => s.textContent === id).map((s) => s.getClientRects().length), scenario.race.id);
  check(idRects.length === 1 && idRects[0] === 1, `the run's id is whole, on one line (${idRects})`);
  await shot(page, "run-narrow");
  await page.setViewportSize({ width: 1280, height: 860 });
  await accessible(page, "a run's page");
  check(await page.$$eval("a[href]", (as, t) => as.every((a) => !a.href.includes(t)), scenario.token),
    "no link on the run's page carries the token");

  // A run whose agent said nothing: its log says so, in words, instead of an empty bar.
  await page.goto(`${origin}${base}#/run/${encodeURIComponent(scenario.quiet.id)}`);
  await page.waitForFunction((id) => document.querySelector("main")?.textContent.includes(id) &&
    document.querySelector("#log"), scenario.quiet.id, { timeout: 30000 }).catch(() => {});
  const silent = await page.evaluate(() => {
    const log = document.querySelector("#log");
    return log ? { text: log.textContent, before: getComputedStyle(log, "::before").content } : null;
  });
  check(silent && silent.text === "" && silent.before.includes("no output yet"),
    `a silent agent's log says it has no output yet (${JSON.stringify(silent)})`);
  await shot(page, "run-silent");

  // The scorecard's charts, and the environments with the queue.
  await page.click('nav a[data-view="scorecard"]');
  await waitFor(page, "figure.chart svg rect.bar", "the scorecard draws its charts");
  check((await page.textContent("main")).includes("PASS rate"), "… PASS rate with its interval");
  check((await page.textContent("main table.card")).includes("1 interrupted"),
    "the run stopped from the page is counted apart, not judged");
  // Every axis's ticks are distinct figures (the time to READY read "0s 0s 1s 1s 1s").
  const axes = await page.$$eval("figure.chart svg", (svgs) => svgs.map((svg) =>
    [...svg.querySelectorAll('text[text-anchor="middle"]')].map((t) => t.textContent)));
  check(axes.length >= 3 && axes.every((ticks) => new Set(ticks).size === ticks.length),
    `each chart's axis has distinct ticks (${axes.map((t) => t.join(" ")).join(" | ")})`);
  await shot(page, "scorecard");
  await accessible(page, "the scorecard");
  await page.click('nav a[data-view="environments"]');
  await waitFor(page, "main h2 + div table, main h2 + div p.empty", "the environments page reads");
  await shot(page, "environments");
  await accessible(page, "the environments and queue");
  await page.close();

  // Without any tab that has it, the token page says where the token is, as text to read.
  const alone = await (await browser.newContext()).newPage();
  await alone.goto(`${origin}${base}#/`);
  await waitFor(alone, "main h1", "a page with no token anywhere asks for it");
  const asked = await alone.textContent("main");
  check(asked.includes("needs its token") && (await alone.$$("main code")).length === 2 && !asked.includes("`"),
    "… naming the command and the address's end as code, with no stray backticks");
  await alone.close();

  // Read-only: the same runs, no action offered, an action POST refused even with the token.
  const readOnly = await open(scenario.readOnlyUrl);
  await waitFor(readOnly, `${raceRow}[data-verdict="PASS"]`, "the read-only dashboard shows the race");
  check((await readOnly.$$("main button")).length === 0, "the read-only dashboard offers no action");
  const roOrigin = new URL(scenario.readOnlyUrl).origin;
  const refused = await fetch(`${roOrigin}/api/runs/${scenario.race.id}/again`,
    { method: "POST", headers: bearer });
  check(refused.status === 404, `a read-only dashboard has no actions (POST: ${refused.status})`);
  await readOnly.close();
} finally {
  await browser.close();
}
check(problems.length === 0, "no console error, page error, dialog or failed request" +
  (problems.length ? `: ${problems.join(" | ")}` : ""));
if (failures.length) {
  console.error(`${failures.length} failed: ${failures.join("; ")}`);
  process.exit(1);
}
