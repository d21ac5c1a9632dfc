// How a test starts one of the fixture programs of test/fixtures as a Node.js process: its
// bundle when the run bundled it (fixture-bundles.ts, from global-setup.ts), else through tsx.
import { existsSync } from "node:fs";
import { basename, join } from "node:path";

/** The fixture programs that run as processes of their own, bundled for each run. */
export const BUNDLED_FIXTURES = [
  "worker-process",
  "notice-worker",
  "rate-limit-worker",
  "ledger-worker",
  "sandbox-command",
  "mcp-odd-server",
] as const;

/** Where the run's bundles are, set by the global setup for the test workers it starts. */
export const FIXTURE_BUNDLES_VARIABLE = "HARNESSX_TEST_FIXTURE_BUNDLES";

/** The Node.js arguments that run the fixture program `script` (its .ts path). */
export function fixtureArgs(script: string): string[] {
  const dir = process.env[FIXTURE_BUNDLES_VARIABLE];
  const bundled =
    dir === undefined ? undefined : join(dir, basename(script).replace(/\.ts$/, ".js"));
  return bundled !== undefined && existsSync(bundled) ? [bundled] : ["--import", "tsx", script];
}
