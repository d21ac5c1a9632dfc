// The layering of DESIGN.md ("Layout"), checked by `npm run lint`: each room imports only the
// rooms below it, the rooms that touch Redis, a model SDK or an effect are the ones named, and
// neither folders nor files import each other in a circle.

/** What each room of src/ may import of ours besides itself: the rooms below it. */
const BELOW = {
  core: [],
  tools: ["core"],
  hooks: ["core"],
  observability: ["core"],
  machines: ["core"],
  middleware: ["core", "tools"],
  permissions: ["core", "tools"],
  features: ["core", "hooks", "tools"],
  extensions: ["core", "hooks", "middleware", "tools"],
  providers: ["core", "features", "tools"],
  engine: [
    "core",
    "extensions",
    "features",
    "hooks",
    "machines",
    "middleware",
    "observability",
    "permissions",
    "tools",
  ],
  store: ["core", "engine", "extensions", "features", "machines", "tools"],
  workers: [
    "core",
    "engine",
    "hooks",
    "machines",
    "observability",
    "permissions",
    "store",
    "tools",
  ],
  runtime: [
    "core",
    "engine",
    "extensions",
    "features",
    "observability",
    "permissions",
    "store",
    "tools",
    "workers",
  ],
  // permissions: a scoped token matches tool and agent names with the policy's own globs.
  dashboard: ["core", "permissions", "runtime", "store", "tools"],
  // The demo agents that `harnessx/testing` and the CLI's demos share.
  testing: ["core", "engine", "permissions", "providers", "tools"],
};

/** One rule a room: it imports nothing of ours but itself and the rooms below it. */
const roomRules = Object.entries(BELOW).map(([room, below]) => ({
  name: `${room}-imports-downward`,
  comment: `src/${room}/ imports only ${below.length === 0 ? "itself (nothing of ours)" : below.join(", ")} (DESIGN.md "Layout").`,
  severity: "error",
  from: { path: `^src/${room}/` },
  to: { path: "^src/", pathNot: `^src/(${[room, ...below].join("|")})/` },
}));

module.exports = {
  forbidden: [
    ...roomRules,
    {
      name: "nothing-imports-cli",
      comment:
        "The CLI is the top room: nothing imports it, least of all the entry points (harnessx/testing loaded the CLI once).",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/cli/" },
      to: { path: "^src/cli/" },
    },
    {
      name: "only-cli-imports-entries",
      comment:
        "Inside src/ only the CLI imports the public entry point; no room imports harnessx/testing.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(cli/|index\\.ts$|testing\\.ts$)" },
      to: { path: "^src/(index|testing)\\.ts$" },
    },
    {
      name: "cli-imports-no-testing-entry",
      comment: "The CLI is not a test: it uses src/testing/ and providers/, not harnessx/testing.",
      severity: "error",
      from: { path: "^src/cli/" },
      to: { path: "^src/testing\\.ts$" },
    },
    {
      name: "machines-perform-no-effects",
      comment:
        "Machines decide, never do (STYLE.md 1): nothing under src/machines/ imports bullmq, ioredis, pino or node:*.",
      severity: "error",
      from: { path: "^src/machines/" },
      to: { path: "(^|/)node_modules/(bullmq|ioredis|pino)/" },
    },
    {
      name: "machines-import-no-node",
      comment: "Nothing under src/machines/ imports a node:* module.",
      severity: "error",
      from: { path: "^src/machines/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "only-runtime-touches-redis",
      comment: "runtime/ is the only room that touches Redis and BullMQ.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/runtime/" },
      to: { path: "(^|/)node_modules/(bullmq|ioredis)/" },
    },
    {
      name: "only-providers-touch-models",
      comment: "providers/ is the only room that touches a model SDK or an MCP server.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/providers/" },
      to: { path: "(^|/)node_modules/(openai|@anthropic-ai/sdk|@modelcontextprotocol/sdk|ai)/" },
    },
    {
      name: "dashboard-through-agent-runtime",
      comment: "The dashboard reaches runs only through AgentRuntime.",
      severity: "error",
      from: { path: "^src/dashboard/" },
      to: { path: "^src/runtime/", pathNot: "^src/runtime/agent-runtime\\.ts$" },
    },
    {
      name: "no-folder-cycles",
      comment: "No two folders import each other, directly or round a circle.",
      severity: "error",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-file-cycles",
      comment: "No two files import each other, directly or round a circle.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "imports-resolve",
      comment: "Every import resolves: an unresolved one would pass every rule above unseen.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports are arrows too: a room that names another's type depends on it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
  },
};
