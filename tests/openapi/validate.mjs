// Validates recorded GitHub exchanges against GitHub's OpenAPI description (our subset):
// every request body cocode sent and every response the loopback server returned.
//   node validate.mjs <github-subset.json> <exchanges.jsonl>
// Each line of exchanges.jsonl: {"operation", "status", "request_body"?, "response_body"?}.
// With COCODE_FULL_RUN=1, every operation of the subset must appear at least once: a test that
// stopped exercising one is caught here rather than silently validating less.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(process.env.COCODE_PEERS_DIR + "/package.json");
const Ajv = require("ajv");
const addFormats = require("ajv-formats");

const [specPath, exchangesPath] = process.argv.slice(2);
// Coverage is demanded on full runs (ci/test sets this); a run of a few tests checks only
// what they recorded, and so does a full run that leaves groups out on purpose (ci/compat
// names them in COCODE_LEFT_OUT).
const leftOut = process.env.COCODE_LEFT_OUT ?? "";
const requireAll = process.env.COCODE_FULL_RUN === "1" && leftOut === "";
if (leftOut !== "") console.log(`coverage not required: this run leaves out ${leftOut}`);
const spec = JSON.parse(readFileSync(specPath, "utf8"));

// OpenAPI 3.0's `nullable: true` is not JSON Schema: rewrite it as anyOf [schema, null].
function rewrite(node) {
  if (Array.isArray(node)) return node.map(rewrite);
  if (!node || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "nullable" || key === "example" || key === "examples") continue;
    out[key] = rewrite(value);
  }
  if (node.nullable === true) return { anyOf: [out, { type: "null" }] };
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat("repo.nwo", /^[^/]+\/[^/]+$/);  // GitHub's own format: OWNER/NAME
ajv.addSchema({ $id: "github", components: rewrite(spec.components) });
const refs = (node) => JSON.parse(JSON.stringify(rewrite(node)).replaceAll('"#/components/', '"github#/components/'));

const compiled = new Map();
function validator(key, schema) {
  if (!compiled.has(key)) compiled.set(key, ajv.compile(refs(schema)));
  return compiled.get(key);
}

const operations = new Map();
for (const item of Object.values(spec.paths))
  for (const op of Object.values(item)) operations.set(op.operationId, op);

function resolveResponse(response) {
  const ref = response && response.$ref;
  if (!ref) return response;
  return spec.components.responses[ref.split("/").pop()];
}

const seen = new Set();
const failures = [];
let checked = 0;
if (!existsSync(exchangesPath)) {
  console.log(`no exchanges recorded at ${exchangesPath}`);
  process.exit(requireAll ? 1 : 0);
}
const lines = readFileSync(exchangesPath, "utf8").split("\n").filter(Boolean);
for (const [index, line] of lines.entries()) {
  const ex = JSON.parse(line);
  const op = operations.get(ex.operation);
  const where = `exchange ${index + 1} (${ex.operation} ${ex.status})`;
  if (!op) { failures.push(`${where}: not an operation of the subset`); continue; }
  seen.add(ex.operation);
  if (ex.request_body !== undefined) {
    const schema = op.requestBody?.content?.["application/json"]?.schema;
    if (!schema) failures.push(`${where}: the operation takes no JSON body`);
    else {
      const validate = validator(`${ex.operation} request`, schema);
      if (!validate(ex.request_body)) failures.push(`${where}: request body: ${ajv.errorsText(validate.errors)}`);
      checked++;
    }
  }
  if (ex.response_body !== undefined) {
    const response = resolveResponse(op.responses[String(ex.status)]);
    if (!response) { failures.push(`${where}: status ${ex.status} is not documented`); continue; }
    const schema = response.content?.["application/json"]?.schema;
    if (!schema) failures.push(`${where}: no JSON body is documented for ${ex.status}`);
    else {
      const validate = validator(`${ex.operation} ${ex.status}`, schema);
      if (!validate(ex.response_body)) failures.push(`${where}: response: ${ajv.errorsText(validate.errors)}`);
      checked++;
    }
  }
}
if (requireAll) {
  for (const id of operations.keys())
    if (!seen.has(id)) failures.push(`operation ${id} was never exercised`);
}
for (const failure of failures) console.error(failure);
console.log(`validated ${checked} bodies from ${lines.length} exchanges, ${seen.size} operations; ${failures.length} failures`);
process.exit(failures.length ? 1 : 0);
