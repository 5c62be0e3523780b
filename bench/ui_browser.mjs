// bench/run ui's browser half (bench/ui_bench.py starts the server): Debian's chromium,
// driven by playwright-core. Prints JSON: firstPage and apiRuns (ms, each repeat), change (ms
// from run-info.yaml renamed to the new state on screen, each repeat), idleCpu (the server's
// CPU seconds over `idle` seconds with a page open and nothing changing).
//   node ui_browser.mjs SCENARIO_JSON
import { readFileSync, writeFileSync, renameSync } from "node:fs";
import { createRequire } from "node:module";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const require = createRequire(`${scenario.peers}/node_modules/`);
const { chromium } = require("playwright-core");
const origin = new URL(scenario.url).origin;
const token = new URL(scenario.url).hash.replace("#token=", "");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpu = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
};
function rewrite(folder, status) {
  const info = `${folder}/run-info.yaml`;
  const text = readFileSync(info, "utf8").replace(/^status: .*$/m, `status: ${status}`);
  writeFileSync(`${info}.bench`, text);
  renameSync(`${info}.bench`, info);
}

const browser = await chromium.launch({
  executablePath: scenario.chromium,
  args: ["--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync",
    "--disable-component-update", "--disable-dev-shm-usage"],
});
const out = { firstPage: [], apiRuns: [], change: [] };
for (let i = 0; i < scenario.repeat; i++) {
  const t0 = performance.now();
  const res = await fetch(`${origin}/api/runs`, { headers: { Authorization: `Bearer ${token}` } });
  await res.json();
  out.apiRuns.push(performance.now() - t0);
}
for (let i = 0; i < scenario.repeat; i++) {
  const context = await browser.newContext();
  const page = await context.newPage();
  // When the first race with its rows is in the page, by the page's own clock (from the
  // navigation's start).
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (document.querySelector("section[data-issue] tr[data-run]")) {
        window.firstRace = performance.now();
        observer.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(scenario.url);
  await page.waitForFunction(() => window.firstRace !== undefined);
  out.firstPage.push(await page.evaluate(() => window.firstRace));
  await context.close();
}
const page = await browser.newPage();
await page.goto(scenario.url);
const row = `tr[data-run="${scenario.changedId}"]`;
await page.waitForSelector(row, { timeout: 60000 });
for (let i = 0; i < scenario.repeat; i++) {
  const state = i % 2 === 0 ? "failed" : "completed";
  await page.evaluate(([sel, want]) => {
    window.seen = undefined;
    const look = () => {
      const tr = document.querySelector(sel);
      if (tr && tr.dataset.state === want) {
        window.seen = Date.now();
        return true;
      }
      return false;
    };
    new MutationObserver((_, observer) => look() && observer.disconnect())
      .observe(document.getElementById("main"), { childList: true, subtree: true, attributes: true });
  }, [row, state]);
  const t0 = Date.now();
  rewrite(scenario.changed, state);
  await page.waitForFunction(() => window.seen !== undefined, null, { timeout: 10000 });
  out.change.push((await page.evaluate(() => window.seen)) - t0);
}
await sleep(1000);
const before = cpu(scenario.serverPid);
await sleep(scenario.idle * 1000);
out.idleCpu = cpu(scenario.serverPid) - before;
await browser.close();
console.log(JSON.stringify(out));
