// Validates JSON documents against a JSON Schema with ajv (from the test peers).
//   node validate_json.mjs <schema.json> <document.json>...
// Prints each document's errors and exits 1 when one does not conform.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(process.env.COCODE_PEERS_DIR + "/package.json");
const Ajv = require("ajv");

const [schemaPath, ...documents] = process.argv.slice(2);
const ajv = new Ajv({ strict: true, allErrors: true });
const validate = ajv.compile(JSON.parse(readFileSync(schemaPath, "utf8")));
let failed = false;
for (const path of documents) {
  if (!validate(JSON.parse(readFileSync(path, "utf8")))) {
    failed = true;
    console.log(path + ": " + ajv.errorsText(validate.errors, { separator: "; " }));
  }
}
process.exit(failed ? 1 : 0);
