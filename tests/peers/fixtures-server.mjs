// Starts @octokit/fixtures-server's middleware bound to 127.0.0.1 (its own launcher listens on
// every interface) on a free port, with the package's scenarios plus ours from
// tests/github-fixtures/. Prints "listening <port>" once ready; exits when stdin closes.
//   node tests/peers/fixtures-server.mjs <peers dir>
import { createServer } from "node:http";
import { readFileSync, readdirSync } from "node:fs";
import { pathToFileURL } from "node:url";

const peers = process.argv[2];
const load = (path) => import(pathToFileURL(`${peers}/node_modules/${path}`).href);
const { default: express } = await load("express/index.js");
const { default: fixtureServerMiddleware } = await load("@octokit/fixtures-server/index.js");
const { default: DEFAULTS } = await load("@octokit/fixtures-server/lib/defaults.js");

const ours = new URL("../github-fixtures/", import.meta.url);
const fixtures = { ...DEFAULTS.fixtures };
for (const name of readdirSync(ours).filter((n) => n.endsWith(".json")))
  fixtures[name.replace(/\.json$/, "")] = JSON.parse(readFileSync(new URL(name, ours)));

const server = createServer();
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  const app = express();
  app.use(fixtureServerMiddleware({ port, fixturesUrl: `http://127.0.0.1:${port}`, logLevel: "silent", fixtures }));
  server.on("request", app);
  console.log(`listening ${port}`);
});
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
