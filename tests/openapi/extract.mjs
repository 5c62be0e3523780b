// Extracts the operations cocode calls, and every schema they reference, from GitHub's OpenAPI
// description (@octokit/openapi, generated/api.github.com.json) into github-subset.json.
// Run by hand when the operation list changes (the full package is ~385 MB; CI never installs
// it):   node tests/openapi/extract.mjs <path to api.github.com.json>
import { readFileSync, writeFileSync } from "node:fs";

export const operations = [
  "repos/get",
  "issues/get",
  "issues/list-for-repo",
  "issues/list-comments",
  "issues/list-comments-for-repo",
  "issues/get-comment",
  "issues/list-events",
  "issues/create-comment",
  "issues/update-comment",
  "issues/delete-comment",
  "issues/add-labels",
  "issues/remove-label",
  "issues/create-label",
  "reactions/create-for-issue",
  "reactions/create-for-issue-comment",
  "repos/get-collaborator-permission-level",
  "repos/create-commit-status",
  "repos/list-commit-statuses-for-ref",
  "pulls/create",
  "pulls/list",
  "pulls/update",
  "pulls/get",
  "reactions/create-for-pull-request-review-comment",
  "pulls/list-reviews",
  "pulls/list-review-comments",
  "pulls/create-reply-for-review-comment",
  "checks/list-for-ref",
  "actions/get-job-for-workflow-run",
  "actions/download-job-logs-for-workflow-run",
  "apps/create-installation-access-token",
  "users/get-authenticated",
];

const source = process.argv[2];
if (!source) {
  console.error("usage: node extract.mjs <api.github.com.json>");
  process.exit(2);
}
const spec = JSON.parse(readFileSync(source, "utf8"));
const out = {
  openapi: spec.openapi,
  info: { title: spec.info.title, version: spec.info.version,
          description: "Subset of GitHub's REST description used by cocode's tests" },
  paths: {},
  components: {},
};

const pending = [];
const seen = new Set();
function collect(node) {
  if (Array.isArray(node)) return node.forEach(collect);
  if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && !seen.has(value)) {
        seen.add(value);
        pending.push(value);
      } else {
        collect(value);
      }
    }
  }
}

const found = new Set();
for (const [path, item] of Object.entries(spec.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (!operations.includes(op.operationId)) continue;
    found.add(op.operationId);
    const { operationId, summary, parameters, requestBody, responses } = op;
    out.paths[path] ??= {};
    out.paths[path][method] = { operationId, summary, parameters, requestBody, responses };
    collect(out.paths[path][method]);
  }
}
const missing = operations.filter((id) => !found.has(id));
if (missing.length) {
  console.error("not in the description: " + missing.join(", "));
  process.exit(1);
}
while (pending.length) {
  const ref = pending.pop();
  const [, section, name] = ref.match(/^#\/components\/([^/]+)\/(.+)$/);
  const value = spec.components[section][name];
  out.components[section] ??= {};
  out.components[section][name] = value;
  collect(value);
}
writeFileSync(new URL("./github-subset.json", import.meta.url), JSON.stringify(out, null, 1) + "\n");
console.log(`${found.size} operations, ${seen.size} components`);
