// The built-in fs with globSync, for Node.js 20 (see register.mjs).
// globSync takes patterns of "/"-separated segments, where "**" is any
// number of folders and "*" and "?" match within a name, and
// options.cwd, the folder they are relative to; it returns the paths that
// match, relative to it, as Node.js 22's does. That is all the suite asks
// of it (it looks for "**/checks.json").
import fs from "node:fs";
import path from "node:path";

export * from "node:fs";
export default fs;

function segment(s) {
  const re = s.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]");
  return new RegExp("^" + re + "$");
}

function readdir(dir) {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

export function globSync(patterns, options = {}) {
  const cwd = options.cwd ? String(options.cwd) : process.cwd();
  const out = new Set();
  const walk = (rel, parts) => {
    if (parts.length === 0) {
      if (rel !== "") out.add(rel);
      return;
    }
    const [head, ...rest] = parts;
    const abs = path.join(cwd, rel);
    if (head === "**") {
      walk(rel, rest);
      for (const e of readdir(abs)) {
        if (e.isDirectory()) walk(path.join(rel, e.name), parts);
      }
      return;
    }
    const re = segment(head);
    for (const e of readdir(abs)) {
      if (re.test(e.name) && (rest.length === 0 || e.isDirectory())) walk(path.join(rel, e.name), rest);
    }
  };
  for (const p of [].concat(patterns)) walk("", String(p).split("/").filter((s) => s !== ""));
  return [...out];
}
