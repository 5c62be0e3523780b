// A GitHub Actions runner, simulated closely enough to run cocode's action and example
// workflows for real on this machine: the workflow is read and checked with GitHub's own
// parser (@actions/workflow-parser), every ${{ }} is evaluated with GitHub's own evaluator
// (@actions/expressions), jobs run in the order `needs` gives, a matrix job's entries each on a
// runner of its own (a scratch folder: HOME, RUNNER_TEMP, the workspace, the tool cache), and
// steps get GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY and GITHUB_EVENT_PATH as
// the runner gives them. `uses:` steps: actions/checkout (a clone of ORIGIN), actions/cache and
// its restore and save halves (a cache folder shared by the runners; restore-keys as GitHub reads
// them), actions/upload-artifact (into the scratch's artifacts/), and cocode's own action from
// the sources under test, run as the composite action it is.
//
//   node runner.mjs --workflow FILE --event NAME --payload FILE --origin GIT_URL --scratch DIR
//                   --source DIR --peers DIR [--cache DIR] [--run-id N] [--secret NAME=VALUE]…
// --cache: where actions/cache keeps what it saves (default: under --scratch), so that one run
// of the workflow can find what an earlier one saved, as on GitHub.
// Prints one JSON line: {"jobs": {"<job>": [{"matrix", "result", "outputs", "runner",
// "steps": [{"name", "seconds"}], "commands": [{"command", "properties", "data"}]}]}} (commands:
// the workflow commands the job's output gave, read as actions/runner reads them); exit 0 when
// every job that ran succeeded or was skipped.
import { readFileSync, writeFileSync, mkdirSync, existsSync, cpSync, appendFileSync, openSync, closeSync, rmSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { createRequire, register } from "node:module";

const args = { secret: [] };
for (let i = 2; i < process.argv.length; i += 2) {
  const key = process.argv[i].replace(/^--/, "");
  if (key === "secret") args.secret.push(process.argv[i + 1]);
  else args[key] = process.argv[i + 1];
}
const require = createRequire(join(args.peers, "package.json"));
const YAML = require("yaml");
// Both are ES modules only: imported by their paths in the peers' tree. The parser imports its
// JSON schemas without the import attribute this Node.js asks for; a load hook adds it.
register(
  "data:text/javascript," +
    encodeURIComponent(
      "export async function load(url, context, next) {" +
        " if (url.endsWith('.json')) return next(url, { ...context, importAttributes: { type: 'json' } });" +
        " return next(url, context); }",
    ),
);
const modules = join(args.peers, "node_modules", "@actions");
const { parseWorkflow, NoOperationTraceWriter } = await import(join(modules, "workflow-parser/dist/index.js"));
const { Lexer, Parser, Evaluator, data } = await import(join(modules, "expressions/dist/index.js"));

const secrets = Object.fromEntries(args.secret.map((s) => [s.slice(0, s.indexOf("=")), s.slice(s.indexOf("=") + 1)]));
const payload = JSON.parse(readFileSync(args.payload, "utf8"));
const workflowText = readFileSync(args.workflow, "utf8");

// GitHub's parser first: a workflow it refuses does not run.
const parsed = parseWorkflow({ name: args.workflow, content: workflowText }, new NoOperationTraceWriter());
const errors = parsed.context.errors.getErrors();
if (errors.length) {
  console.error(errors.map((e) => e.message).join("\n"));
  process.exit(2);
}
const workflow = YAML.parse(workflowText);

// ---- expressions ----------------------------------------------------------------------------
const statusFunctions = (status) =>
  new Map(
    [
      ["success", () => status === "success"],
      ["always", () => true],
      ["failure", () => status === "failure"],
      ["cancelled", () => false],
    ].map(([name, fn]) => [name, { name, minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(fn()) }]),
  );

function evaluate(expression, context, status = "success") {
  const names = Object.keys(context);
  const functions = statusFunctions(status);
  const lexed = new Lexer(expression).lex();
  const tree = new Parser(lexed.tokens, names, [...functions.values()]).parse();
  const dictionary = JSON.parse(JSON.stringify(context), data.reviver);
  const value = new Evaluator(tree, dictionary, functions).evaluate();
  return JSON.parse(JSON.stringify(value, data.replacer));
}

// A string holding ${{ }}: one expression alone gives its value; several are spliced as text.
function expand(value, context) {
  if (typeof value !== "string") return value;
  const whole = value.match(/^\s*\$\{\{([\s\S]*?)\}\}\s*$/);
  if (whole) return evaluate(whole[1], context);
  return value.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e) => {
    const v = evaluate(e, context);
    return v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
  });
}

function condition(text, context, status) {
  if (text === undefined) return status === "success";
  let e = String(text).trim().replace(/^\$\{\{([\s\S]*)\}\}$/, "$1");
  if (!/\b(success|always|failure|cancelled)\s*\(/.test(e)) e = `success() && (${e})`;
  const v = evaluate(e, context, status);
  return v !== false && v !== null && v !== 0 && v !== "";
}

// ---- files the runner gives each step -------------------------------------------------------
function readCommandFile(path) {
  const out = {};
  if (!existsSync(path)) return out;
  const lines = readFileSync(path, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    const heredoc = line.match(/^([^=<]+)<<(.+)$/);
    if (heredoc) {
      const value = [];
      while (++i < lines.length && lines[i] !== heredoc[2]) value.push(lines[i]);
      out[heredoc[1]] = value.join("\n");
    } else {
      const eq = line.indexOf("=");
      if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
    }
  }
  return out;
}

// ---- a runner -------------------------------------------------------------------------------
let runnerCount = 0;
function makeRunner() {
  const root = join(args.scratch, `runner-${++runnerCount}`);
  const r = {
    root,
    home: join(root, "home"),
    temp: join(root, "temp"),
    toolCache: join(root, "tool-cache"),
    workspace: join(root, "work", "repo"),
    env: {},
    path: [],
    summary: join(root, "summary.md"),
    commands: [], // the workflow commands its steps' output gave, as the runner carried them out
    stopToken: null,
    masks: [],
  };
  for (const dir of [r.home, r.temp, r.toolCache, r.workspace]) mkdirSync(dir, { recursive: true });
  return r;
}

const repository = payload.repository?.full_name ?? "owner/repo";
const runId = args["run-id"] ?? "4242";
function githubContext(runner, actionPath) {
  return {
    event: payload,
    event_name: args.event,
    repository,
    repository_owner: repository.split("/")[0],
    token: secrets.GITHUB_TOKEN ?? "",
    workspace: runner.workspace,
    action_path: actionPath ?? "",
    server_url: process.env.GITHUB_SERVER_URL ?? "https://github.com",
    api_url: process.env.GITHUB_API_URL ?? "https://api.github.com",
    run_id: runId,
    ref: "refs/heads/main",
    head_ref: payload.pull_request?.head?.ref ?? "",
  };
}

// ---- workflow commands: a step's output read as actions/runner reads it -----------------------
// (src/Runner.Worker/ActionCommandManager.cs, src/Runner.Common/ActionCommand.cs): one stream of
// lines, ended by \n, \r\n or a bare \r; a line is a command when, trimmed of leading
// whitespace, it starts with `::NAME ...::` (NAME registered, any case), or else when it holds
// `##[NAME ...]` anywhere. `::stop-commands::TOKEN` stops all but `::TOKEN::` for the job.
const kRegistered = ["add-mask", "add-matcher", "add-path", "debug", "echo", "endgroup", "error", "group",
  "notice", "remove-matcher", "save-state", "set-env", "set-output", "warning", "stop-commands"];
const unescape = (text, pairs) => pairs.reduce((t, [from, to]) => t.split(from).join(to), text ?? "");
const kData = [["%0D", "\r"], ["%0A", "\n"], ["%25", "%"]];
const kProperty = [["%0D", "\r"], ["%0A", "\n"], ["%3A", ":"], ["%2C", ","], ["%25", "%"]];
const kLegacy = [["%3B", ";"], ["%0D", "\r"], ["%0A", "\n"], ["%5D", "]"], ["%25", "%"]];
function properties(text, separator, pairs) {
  const out = {};
  for (const item of text.split(separator).filter(Boolean)) {
    const at = item.indexOf("=");
    if (at > 0 && at < item.length - 1) out[item.slice(0, at)] = unescape(item.slice(at + 1), pairs);
  }
  return out;
}
function parseCommand(line, registered) {
  const trimmed = line.replace(/^\s+/, "");
  if (trimmed.startsWith("::")) {
    const end = trimmed.indexOf("::", 2);
    if (end >= 0) {
      const info = trimmed.slice(2, end);
      const space = info.indexOf(" ");
      const name = (space < 0 ? info : info.slice(0, space)).toLowerCase();
      if (registered.has(name))
        return {
          command: name,
          properties: space > 0 ? properties(info.slice(space + 1).trim(), ",", kProperty) : {},
          data: unescape(trimmed.slice(end + 2), kData),
        };
    }
  }
  const at = line.indexOf("##[");
  if (at < 0) return null;
  const close = line.indexOf("]", at);
  if (close < 0) return null;
  const info = line.slice(at + 3, close);
  const space = info.indexOf(" ");
  const name = (space < 0 ? info : info.slice(0, space)).toLowerCase();
  if (!registered.has(name)) return null;
  return {
    command: name,
    properties: space > 0 ? properties(info.slice(space + 1), ";", kLegacy) : {},
    data: unescape(line.slice(close + 1), kLegacy),
  };
}
function readCommands(runner, output) {
  for (const line of output.split(/\r\n|\r|\n/)) {
    const registered = new Set(kRegistered);
    if (runner.stopToken) registered.add(runner.stopToken.toLowerCase());
    const command = parseCommand(line, registered);
    if (!command) continue;
    if (runner.stopToken) {
      if (command.command === runner.stopToken.toLowerCase()) runner.stopToken = null;
      continue;
    }
    if (command.command === "stop-commands") runner.stopToken = command.data;
    if (command.command === "add-mask") runner.masks.push(command.data);
    runner.commands.push(command);
  }
}

let stepCount = 0;
function runScript(runner, script, env, workdir) {
  const n = ++stepCount;
  const files = {
    GITHUB_OUTPUT: join(runner.temp, `output-${n}`),
    GITHUB_ENV: join(runner.temp, `env-${n}`),
    GITHUB_PATH: join(runner.temp, `path-${n}`),
  };
  for (const f of Object.values(files)) writeFileSync(f, "");
  const scriptFile = join(runner.temp, `step-${n}.sh`);
  writeFileSync(scriptFile, script);
  const full = {
    ...process.env,
    ...runner.env,
    ...env,
    ...files,
    HOME: runner.home,
    RUNNER_TEMP: runner.temp,
    RUNNER_TOOL_CACHE: runner.toolCache,
    RUNNER_OS: "Linux",
    GITHUB_ACTIONS: "true",
    CI: "true",
    GITHUB_WORKSPACE: runner.workspace,
    GITHUB_EVENT_NAME: args.event,
    GITHUB_EVENT_PATH: args.payload,
    GITHUB_REPOSITORY: repository,
    GITHUB_RUN_ID: runId,
    GITHUB_RUN_ATTEMPT: "1",
    GITHUB_STEP_SUMMARY: runner.summary,
    PATH: [...runner.path, process.env.PATH].join(":"),
  };
  // stdout and stderr into one file, in the order they were written: the runner reads both.
  const logFile = join(runner.temp, `log-${n}`);
  const log = openSync(logFile, "w");
  const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", scriptFile], {
    cwd: workdir ?? runner.workspace,
    env: full,
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  const output = readFileSync(logFile, "utf8");
  rmSync(logFile);
  readCommands(runner, output);
  // What the log shows: every value masked (add-mask, secrets) as ***, as on GitHub.
  const masks = [...runner.masks, ...Object.values(secrets)].filter((m) => m.length > 0);
  process.stderr.write(masks.reduce((text, m) => text.split(m).join("***"), output));
  Object.assign(runner.env, readCommandFile(files.GITHUB_ENV));
  for (const p of readFileSync(files.GITHUB_PATH, "utf8").split("\n")) if (p) runner.path.unshift(p);
  return { ok: r.status === 0, outputs: readCommandFile(files.GITHUB_OUTPUT) };
}

// One step of a job or of a composite action: its env and with: evaluated in `context`, then
// the action it uses or the script it runs. Records its outputs under its id in `steps`.
function runStep(runner, step, context, baseEnv, steps) {
  const env = { ...baseEnv };
  for (const [k, v] of Object.entries(step.env ?? {})) env[k] = String(expand(v, context) ?? "");
  let result;
  if (step.uses) {
    const w = {};
    for (const [k, v] of Object.entries(step.with ?? {})) w[k] = expand(v, context);
    result = uses(runner, step, w, env, context);
  } else {
    result = runScript(runner, expand(step.run, context), env);
  }
  if (step.id) steps[step.id] = { outputs: result.outputs, outcome: result.ok ? "success" : "failure" };
  return result;
}

// ---- uses: ----------------------------------------------------------------------------------
const cacheRoot = args.cache ?? join(args.scratch, "actions-cache");
const cacheName = (key) => key.replace(/[^A-Za-z0-9._-]/g, "_");
const pendingSaves = [];
function uses(runner, step, withValues, env, context) {
  const ref = step.uses;
  if (/^actions\/checkout@/.test(ref)) {
    const r = spawnSync("git", ["clone", "-q", args.origin, runner.workspace], { encoding: "utf8" });
    if (r.status !== 0) process.stderr.write(r.stderr);
    return { ok: r.status === 0, outputs: {} };
  }
  // restore and save apart (actions/cache/restore, actions/cache/save), as on GitHub: a key
  // saved once is not saved again.
  if (/^actions\/cache\/(restore|save)@/.test(ref)) {
    const key = String(withValues.key);
    const path = resolve(runner.workspace, String(withValues.path).replace(/^~/, runner.home));
    const saved = join(cacheRoot, cacheName(key));
    const hit = existsSync(saved);
    if (/\/restore@/.test(ref)) {
      // On a miss, the newest entry whose key starts with one of restore-keys (in their order),
      // as GitHub does; cache-hit says whether the key itself was found.
      let from = hit ? saved : null;
      for (const prefix of String(withValues["restore-keys"] ?? "").split("\n").map((k) => k.trim()).filter(Boolean)) {
        if (from) break;
        const matches = existsSync(cacheRoot)
          ? readdirSync(cacheRoot).filter((n) => n.startsWith(cacheName(prefix))).map((n) => join(cacheRoot, n))
          : [];
        matches.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
        from = matches[0] ?? null;
      }
      // A tar, as actions/cache makes it, keeps links as they were written.
      if (from) cpSync(from, path, { recursive: true, verbatimSymlinks: true });
      return { ok: true, outputs: { "cache-hit": hit ? "true" : "false" } };
    }
    if (!hit && existsSync(path)) cpSync(path, saved, { recursive: true, verbatimSymlinks: true });
    return { ok: true, outputs: {} };
  }
  if (/^actions\/cache@/.test(ref)) {
    const key = String(withValues.key);
    const path = resolve(runner.workspace, String(withValues.path).replace(/^~/, runner.home));
    const saved = join(cacheRoot, cacheName(key));
    const hit = existsSync(saved);
    if (hit) cpSync(saved, path, { recursive: true });
    else pendingSaves.push({ from: path, to: saved });
    return { ok: true, outputs: { "cache-hit": hit ? "true" : "false" } };
  }
  // The files of `path` (one a line, relative to the workspace) kept under the scratch's
  // artifacts/<name>/; a file that is not there fails the step (if-no-files-found: error).
  if (/^actions\/upload-artifact@/.test(ref)) {
    const dir = join(args.scratch, "artifacts", String(withValues.name ?? "artifact"));
    mkdirSync(dir, { recursive: true });
    for (const file of String(withValues.path).split("\n").map((p) => p.trim()).filter(Boolean)) {
      const from = resolve(runner.workspace, file);
      if (!existsSync(from)) {
        process.stderr.write(`runner: upload-artifact: no file ${file}\n`);
        return { ok: false, outputs: {} };
      }
      cpSync(from, join(dir, file.split("/").pop()), { recursive: true });
    }
    return { ok: true, outputs: {} };
  }
  if (/(^|\/)cocode\/github-action@/.test(ref) || ref === "./github-action") {
    return composite(runner, resolve(args.source, "github-action"), withValues, env, context);
  }
  process.stderr.write(`runner: ${ref} is not an action this runner knows\n`);
  return { ok: false, outputs: {} };
}

function composite(runner, actionPath, withValues, env, outer) {
  const action = YAML.parse(readFileSync(join(actionPath, "action.yml"), "utf8"));
  const github = githubContext(runner, actionPath);
  const inputs = {};
  for (const [name, spec] of Object.entries(action.inputs ?? {}))
    inputs[name] = name in withValues ? String(withValues[name]) : String(expand(spec.default ?? "", { github }) ?? "");
  for (const name of Object.keys(withValues))
    if (!(name in (action.inputs ?? {}))) process.stderr.write(`runner: unexpected input ${name}\n`);
  const steps = {};
  let status = "success";
  for (const step of action.runs.steps) {
    const context = { ...outer, github, inputs, steps, env: { ...runner.env, ...env } };
    if (!condition(step.if, context, status)) continue;
    const result = runStep(runner, step, context, { ...env, GITHUB_ACTION_PATH: actionPath }, steps);
    if (!result.ok) status = "failure";
  }
  const outputs = {};
  const context = { github, inputs, steps };
  for (const [name, spec] of Object.entries(action.outputs ?? {})) outputs[name] = String(expand(spec.value, context) ?? "");
  return { ok: status === "success", outputs };
}

// ---- jobs -----------------------------------------------------------------------------------
const results = {};
const order = [];
const visit = (name) => {
  if (order.includes(name)) return;
  const needs = [].concat(workflow.jobs[name].needs ?? []);
  needs.forEach(visit);
  order.push(name);
};
Object.keys(workflow.jobs).forEach(visit);

for (const name of order) {
  const job = workflow.jobs[name];
  const needsNames = [].concat(job.needs ?? []);
  const needs = Object.fromEntries(
    needsNames.map((n) => {
      const runs = results[n] ?? [];
      const result = runs.length === 0 ? "skipped" : runs.every((r) => r.result === "success") ? "success" : "failure";
      return [n, { result, outputs: Object.assign({}, ...runs.map((r) => r.outputs)) }];
    }),
  );
  const status = Object.values(needs).every((n) => n.result === "success") ? "success" : "failure";
  const base = { github: githubContext({ workspace: "" }), needs, secrets, vars: {}, env: workflow.env ?? {} };
  results[name] = [];
  if (!condition(job.if, base, status)) continue;
  let entries = [{}];
  if (job.strategy?.matrix) {
    const matrix = expand(job.strategy.matrix, base);
    entries = matrix.include ?? [];
  }
  for (const matrix of entries) {
    const runner = makeRunner();
    const outputs = {};
    const steps = {};
    let state = "success";
    const jobEnv = {};
    const context0 = { ...base, matrix, strategy: {}, runner: { os: "Linux", temp: runner.temp, tool_cache: runner.toolCache } };
    for (const [k, v] of Object.entries(job.env ?? {})) jobEnv[k] = String(expand(v, context0) ?? "");
    const timings = [];
    for (const step of job.steps) {
      const context = { ...context0, steps, env: { ...jobEnv, ...runner.env }, github: githubContext(runner) };
      if (!condition(step.if, context, state)) continue;
      const started = process.hrtime.bigint();
      const result = runStep(runner, step, context, jobEnv, steps);
      if (!result.ok && !step["continue-on-error"]) state = "failure";
      const name = step.id ?? step.name ?? step.uses ?? String(step.run).split("\n")[0];
      timings.push({ name, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
    }
    const context = { ...context0, steps, github: githubContext(runner) };
    for (const [k, v] of Object.entries(job.outputs ?? {})) outputs[k] = String(expand(v, context) ?? "");
    while (pendingSaves.length) {
      const { from, to } = pendingSaves.pop();
      if (state === "success" && existsSync(from)) cpSync(from, to, { recursive: true });
    }
    appendFileSync(join(args.scratch, "summaries.md"), existsSync(runner.summary) ? readFileSync(runner.summary, "utf8") : "");
    results[name].push({ matrix, result: state, outputs, runner: runner.root, steps: timings, commands: runner.commands });
  }
}

console.log(JSON.stringify({ jobs: results }));
const failed = Object.values(results).flat().some((r) => r.result !== "success");
process.exit(failed ? 1 : 0);
