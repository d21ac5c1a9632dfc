import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { userInfo } from "node:os";
import type { Command } from "commander";
import type { TokenEntry } from "../dashboard/token-scopes.js";
import type { AgentRuntime } from "../runtime/agent-runtime.js";
import {
  ExitWith,
  positiveInteger,
  printJson,
  progress,
  UsageError,
  withJson,
} from "./cli-support.js";
import {
  openRedisRuntime,
  type RedisFlags,
  redisUrlOf,
  withRedisOptions,
} from "./redis-runtime.js";

export interface DashboardFlags extends RedisFlags {
  port: number;
  host: string;
  tokenFile?: string;
  readOpen?: boolean;
  /** Host names the dashboard answers besides its address and localhost (`--allowed-host`). */
  allowedHost?: string[];
  json?: boolean;
}

/**
 * The dashboard's tokens: from `--token-file` (a JSON object `{ "name": "token" }`, where a
 * scoped token is `{ "name": { "token": "…", "tools": ["refund_*"], "agents": ["support"] } }`,
 * or lines `name=token`), else one random token named after the user, printed once on stderr.
 */
export async function dashboardTokens(
  file: string | undefined,
): Promise<{ tokens: Record<string, TokenEntry>; generated: boolean }> {
  if (file === undefined) {
    return { tokens: { [userName()]: randomBytes(24).toString("base64url") }, generated: true };
  }
  const text = await readFile(file, "utf8");
  const tokens = parseTokens(text.trim());
  const names = Object.keys(tokens);
  if (names.length === 0) throw new UsageError(`${file} holds no tokens`);
  for (const name of names) {
    const entry = tokens[name] ?? "";
    if ((typeof entry === "string" ? entry : entry.token).length < 16) {
      throw new UsageError(`the token of "${name}" in ${file} is shorter than 16 characters`);
    }
  }
  return { tokens, generated: false };
}

const isGlobList = (value: unknown): boolean =>
  value === undefined || (Array.isArray(value) && value.every((each) => typeof each === "string"));

const isTokenEntry = (value: unknown): value is TokenEntry => {
  if (typeof value === "string") return true;
  if (typeof value !== "object" || value === null) return false;
  const { token, tools, agents, ...rest } = value as Record<string, unknown>;
  return (
    typeof token === "string" &&
    isGlobList(tools) &&
    isGlobList(agents) &&
    Object.keys(rest).length === 0
  );
};

function parseTokens(text: string): Record<string, TokenEntry> {
  if (text.startsWith("{")) {
    const parsed: unknown = JSON.parse(text);
    if (
      typeof parsed !== "object" ||
      parsed === null ||
      !Object.values(parsed).every(isTokenEntry)
    ) {
      throw new UsageError(
        'a token file in JSON is one object: { "name": "token" } or, for a scoped token, { "name": { "token": "…", "tools": ["glob"], "agents": ["glob"] } }',
      );
    }
    return Object.assign(Object.create(null) as Record<string, TokenEntry>, parsed);
  }
  const tokens = Object.create(null) as Record<string, string>;
  for (const [index, line] of text.split("\n").entries()) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const at = trimmed.indexOf("=");
    if (at <= 0) {
      // The line is never echoed: a bare token is exactly what it would show.
      throw new UsageError(
        `line ${index + 1} of the token file is not name=token (a bare token needs a name: ops=<token>)`,
      );
    }
    tokens[trimmed.slice(0, at).trim()] = trimmed.slice(at + 1).trim();
  }
  return tokens;
}

function userName(): string {
  try {
    return userInfo().username || "operator";
  } catch {
    return "operator";
  }
}

/** Serves the dashboard over `runtime` until SIGINT or SIGTERM, then closes it. */
export async function serveDashboard(
  runtime: AgentRuntime,
  flags: DashboardFlags,
  announce: Record<string, unknown> = {},
): Promise<void> {
  const { createDashboard } = await import("../dashboard/create-dashboard.js");
  const { tokens, generated } = await dashboardTokens(flags.tokenFile);
  const dashboard = createDashboard({
    runtime,
    tokens,
    readOpen: flags.readOpen === true,
    allowedHosts: flags.allowedHost ?? [],
  });
  const server = await dashboard.listen({ port: flags.port, host: flags.host });
  const names = Object.keys(tokens);
  if (flags.json === true) {
    printJson({ url: server.url, tokens: names, ...announce });
  } else {
    console.log(`harnessx dashboard at ${server.url}`);
  }
  if (generated) {
    // The only place the generated token is shown: stderr, never the --json document.
    progress(`token for "${names[0]}" (type it once in the page): ${tokens[names[0] ?? ""]}`);
  }
  progress("press Ctrl-C to stop");
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  await server.close();
}

export const withDashboardOptions = (command: Command): Command =>
  command
    .option("--port <n>", "the port to listen on (0: any free port)", portNumber, 4400)
    .option("--host <host>", "the interface to listen on", "127.0.0.1")
    .option(
      "--token-file <file>",
      'bearer tokens by name: JSON { name: token } or name=token lines; a scoped token (decides only some tools or agents) is JSON { name: { "token": …, "tools": [glob…], "agents": [glob…] } }',
    )
    .option("--read-open", "let reads through without a token (writes always need one)")
    .option(
      "--allowed-host <name>",
      "a host name (or name:port) the page is reached by, besides its address and localhost; repeat for more",
      (value: string, previous: string[] = []) => [...previous, value],
    );

export function portNumber(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`--port takes 0…65535, not "${value}"`);
  }
  return port;
}

/** `dashboard --redis URL --port N`: the page and JSON API over a Redis runtime's runs. */
export function registerDashboard(program: Command): Command {
  return withJson(withDashboardOptions(withRedisOptions(program.command("dashboard"))))
    .description("serve the dashboard (runs, timelines, the approvals inbox, queues) over Redis")
    .action(async (flags: DashboardFlags) => {
      const runtime = await openRedisRuntime(flags, "dashboard");
      try {
        await serveDashboard(runtime, flags);
      } finally {
        await runtime.close({ timeoutMs: 2_000 });
      }
    });
}

interface DoctorFlags extends RedisFlags {
  json?: boolean;
  strandedAfterMs?: number;
  expectStore?: string;
}

/** `doctor --redis URL`: is this Redis fit for harnessx, and are its runs healthy? */
export function registerDoctor(program: Command): Command {
  return withJson(withRedisOptions(program.command("doctor")))
    .description(
      "check a Redis for harnessx: eviction, persistence, version, cluster, keys, stranded runs, lag",
    )
    .option(
      "--stranded-after-ms <ms>",
      "how long an unfinished run without a lease goes unsaved before it counts as stranded",
      positiveInteger,
    )
    .option(
      "--expect-store <id>",
      "the store id an earlier report gave: a missing or different store marker means Redis lost its data",
    )
    .action(async (flags: DoctorFlags) => {
      const { runDoctor } = await import("./doctor.js");
      const code = await runDoctor({
        redis: redisUrlOf(flags, "doctor"),
        ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
        ...(flags.json === undefined ? {} : { json: flags.json }),
        ...(flags.strandedAfterMs === undefined ? {} : { strandedAfterMs: flags.strandedAfterMs }),
        ...(flags.expectStore === undefined ? {} : { expectStore: flags.expectStore }),
      });
      if (code !== 0) throw new ExitWith(code);
    });
}
