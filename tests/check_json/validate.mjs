// Every check.json the suite's runs wrote, against docs/check.schema.json (ajv from the test
// peers, the draft its "$schema" names): the verdicts of plain runs, rounds, plan rounds and code
// rounds held to a plan, as the tests that keep their folders (COCODE_TEST_SCRATCH) left them.
// And every task.json of a replay set the suite mined (.cocode/replay/tasks/<id>/task.json),
// against docs/replay-task.schema.json.
//   node validate.mjs <schema.json> <scratch folder> [<replay task schema.json>]
// With COCODE_FULL_RUN=1, the kinds above must each be among them: a scan that found no plan
// round would prove nothing about plan rounds; nor one that found no task.json about tasks.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(process.env.COCODE_PEERS_DIR + "/package.json");
const [schemaPath, scratch, taskSchemaPath] = process.argv.slice(2);
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const Ajv = String(schema.$schema).includes("2020-12") ? require("ajv/dist/2020") : require("ajv");
const ajv = new Ajv({ strict: true, allErrors: true });
const validate = ajv.compile(schema);

const validateTask = taskSchemaPath
  ? ajv.compile(JSON.parse(readFileSync(taskSchemaPath, "utf8")))
  : null;
const found = [];
const tasks = [];
const walk = (dir) => {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // a folder a test made unreadable, or gone meanwhile
  }
  for (const entry of entries) {
    if (entry.name === "node_modules" || entry.name === ".git") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (entry.isFile() && entry.name === "check.json") found.push(path);
    else if (entry.isFile() && entry.name === "task.json" && dir.includes("/replay/tasks/"))
      tasks.push(path);
  }
};
walk(scratch);

const failures = [];
// The document at `path` when it is JSON that `check` accepts; else null, and why is a failure.
const valid = (path, check) => {
  let doc;
  try {
    doc = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    failures.push(`${path}: not JSON (${e.message})`);
    return null;
  }
  if (check(doc)) return doc;
  failures.push(`${path}: ${ajv.errorsText(check.errors, { separator: "; " })}`);
  return null;
};
const kinds = { run: 0, round: 0, "plan round": 0, "held to a plan": 0 };
for (const path of found) {
  const doc = valid(path, validate);
  if (!doc) continue;
  kinds.run += 1;
  if ((doc.round ?? 1) > 1) kinds.round += 1;
  if (doc.plan_round) kinds["plan round"] += 1;
  else if (doc.plan) kinds["held to a plan"] += 1;
}
// Every kind is demanded on full runs (ci/test), not on a run of a few tests nor on a full run
// that leaves groups out on purpose (ci/compat names them in COCODE_LEFT_OUT).
const leftOut = process.env.COCODE_LEFT_OUT ?? "";
const requireAll = process.env.COCODE_FULL_RUN === "1" && leftOut === "";
if (leftOut !== "") console.log(`every kind not required: this run leaves out ${leftOut}`);
if (requireAll)
  for (const [kind, count] of Object.entries(kinds))
    if (count === 0) failures.push(`no check.json of a ${kind} was found under ${scratch}`);
if (validateTask) {
  for (const path of tasks) valid(path, validateTask);
  if (requireAll && tasks.length === 0)
    failures.push(`no replay task.json was found under ${scratch}`);
  console.log(`validated ${tasks.length} replay task.json`);
}
for (const failure of failures) console.log(failure);
console.log(
  `validated ${found.length} check.json: ` +
    Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(", ") +
    `; ${failures.length} failures`,
);
process.exit(failures.length ? 1 : 0);
