// Node's built-in modules as the core uses them: import these from here, not from "node:…".
// A static `import` of a built-in makes Node build an ES module facade for it (every export
// copied into a module record) while `import "harnessx"` links; process.getBuiltinModule hands
// over the module itself. For the six built-ins the core used, the facades cost about 2 ms of
// the import's cost over its floor (SPEC §15).

export const { AsyncLocalStorage } = process.getBuiltinModule("node:async_hooks");
export const { createRequire } = process.getBuiltinModule("node:module");
export const {
  accessSync,
  constants,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
} = process.getBuiltinModule("node:fs");
/** node:fs/promises, for `fs.readdir(...)`, `fs.stat(...)`. */
export const fsPromises = process.getBuiltinModule("node:fs/promises");
export const path = process.getBuiltinModule("node:path");
