// Builds our own recorded-traffic scenario, in @octokit/fixtures' format, from the examples in
// GitHub's OpenAPI description: GET one issue, then POST a comment on it (the fixtures package
// has neither). Run by hand after changing it:  node tests/github-fixtures/build.mjs
import { readFileSync, writeFileSync } from "node:fs";

const spec = JSON.parse(readFileSync(new URL("../openapi/github-subset.json", import.meta.url)));
const example = (name) => structuredClone(spec.components.examples[name].value);
const token = "token " + "0".repeat(39) + "1";
const repo = "/repos/octokit-fixture-org/hello-world";

const issue = example("issue");
issue.number = 1;
issue.title = "Found a bug";
issue.body = "I'm having a problem with this.";
delete issue.pull_request;

const commentBody = "<!-- cocode:issue-1/fixture -->\ncocode fixture comment";
const comment = example("issue-comment");
comment.body = commentBody;

const headers = (body) => ({
  "content-type": "application/json; charset=utf-8",
  "content-length": String(Buffer.byteLength(JSON.stringify(body))),
  "x-ratelimit-limit": "5000",
  "x-ratelimit-remaining": "4999",
  "x-ratelimit-reset": "1507651200",
});

const fixture = [
  {
    scope: "https://api.github.com:443",
    method: "get",
    path: `${repo}/issues/1`,
    body: "",
    status: 200,
    response: issue,
    reqheaders: { accept: "application/vnd.github.v3+json", authorization: token, host: "api.github.com" },
    responseIsBinary: false,
    headers: headers(issue),
  },
  {
    scope: "https://api.github.com:443",
    method: "post",
    path: `${repo}/issues/1/comments`,
    body: { body: commentBody },
    status: 201,
    response: comment,
    reqheaders: {
      accept: "application/vnd.github.v3+json",
      "content-type": "application/json; charset=utf-8",
      authorization: token,
      host: "api.github.com",
    },
    responseIsBinary: false,
    headers: headers(comment),
  },
];
writeFileSync(new URL("./get-issue-and-create-comment.json", import.meta.url),
              JSON.stringify(fixture, null, 2) + "\n");
