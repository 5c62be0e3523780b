// Delivers a webhook as GitHub does: the payload signed with the secret by GitHub's own
// @octokit/webhooks-methods (a test peer), POSTed with GitHub's headers. Prints the status.
//   node deliver.mjs PEERS URL EVENT DELIVERY PAYLOAD_FILE SECRET [good|unsigned|truncated]
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [peers, url, event, delivery, file, secret, how = "good"] = process.argv.slice(2);
const { sign } = await import(
  pathToFileURL(`${peers}/node_modules/@octokit/webhooks-methods/dist-node/index.js`).href
);
const body = readFileSync(file, "utf8");
const headers = {
  "content-type": "application/json",
  "user-agent": "GitHub-Hookshot/cocode-test",
  "x-github-event": event,
  "x-github-delivery": delivery,
};
const signature = await sign(secret, body);
if (how === "good") headers["x-hub-signature-256"] = signature;
if (how === "truncated") headers["x-hub-signature-256"] = signature.slice(0, 40);
const response = await fetch(url, { method: "POST", headers, body });
console.log(response.status);
