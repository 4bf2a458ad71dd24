// Preloaded with node --import, before the conformance suite starts: on a
// Node.js without fs.globSync (Node.js 20; 22 has it), an import of "fs"
// or "node:fs" from an ES module gets fs.mjs, the built-in fs with a
// globSync of its own. @modelcontextprotocol/conformance 0.2.0-alpha.12
// imports globSync from "fs" and does not start on Node.js 20 without it.
import fs from "node:fs";
import { register } from "node:module";

if (typeof fs.globSync !== "function") {
  register("./hooks.mjs", import.meta.url);
}
