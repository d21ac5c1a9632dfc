// `node --import ./bench/runtime/zod-only-hook.mjs …`: dist's fast-parse.js resolves to
// zod-only-parse.mjs, in this process and (through NODE_OPTIONS) in the workers it starts.
import { register } from "node:module";

register(
  `data:text/javascript,${encodeURIComponent(`
const target = ${JSON.stringify(new URL("./zod-only-parse.mjs", import.meta.url).href)};
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  return resolved.url.endsWith("/dist/store/fast-parse.js") ? { ...resolved, url: target } : resolved;
}`)}`,
);
