// Validates JSON documents against a JSON Schema with ajv (from the test peers), draft-07 or
// 2020-12 as the schema's "$schema" says.
//   node validate_json.mjs <schema.json> <document.json>...
// Prints "<path>: valid" or "<path>: <errors>" for each, and exits 1 when one does not conform.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(process.env.COCODE_PEERS_DIR + "/package.json");
const [schemaPath, ...documents] = process.argv.slice(2);
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const Ajv = String(schema.$schema).includes("2020-12") ? require("ajv/dist/2020") : require("ajv");
const ajv = new Ajv({ strict: true, allErrors: true });
const validate = ajv.compile(schema);
let failed = false;
for (const path of documents) {
  if (validate(JSON.parse(readFileSync(path, "utf8")))) {
    console.log(path + ": valid");
  } else {
    failed = true;
    console.log(path + ": " + ajv.errorsText(validate.errors, { separator: "; " }));
  }
}
process.exit(failed ? 1 : 0);
