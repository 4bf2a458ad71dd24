// Module resolution hooks (see register.mjs): "fs" and "node:fs" imported
// by any ES module but fs.mjs itself resolve to fs.mjs.
const shim = new URL("./fs.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL !== shim) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
