// The dashboard command's token file: plain tokens as lines or JSON, scoped tokens as JSON
// entries `{ token, tools?, agents? }`; anything else is a usage error naming the form.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/cli-support.js";
import { dashboardTokens } from "../../../src/cli/dashboard-commands.js";

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function tokenFile(text: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "hx-tokens-"));
  folders.push(folder);
  const file = join(folder, "tokens.json");
  await writeFile(file, text);
  return file;
}

describe("dashboardTokens", () => {
  it("reads scoped tokens beside plain ones from a JSON file", async () => {
    const file = await tokenFile(
      JSON.stringify({
        ops: "ops-token-0123456789",
        support: { token: "support-token-0123456789", tools: ["refund_*"] },
        dba: { token: "dba-token-0123456789ab", agents: ["dbops"], tools: ["drop_*"] },
      }),
    );
    const { tokens, generated } = await dashboardTokens(file);
    expect(generated).toBe(false);
    expect({ ...tokens }).toEqual({
      ops: "ops-token-0123456789",
      support: { token: "support-token-0123456789", tools: ["refund_*"] },
      dba: { token: "dba-token-0123456789ab", agents: ["dbops"], tools: ["drop_*"] },
    });
  });

  it("refuses a malformed scoped entry or a short scoped token", async () => {
    for (const entry of [
      { token: "support-token-0123456789", tools: "refund_*" },
      { token: "support-token-0123456789", teams: ["a"] },
      { tools: ["refund_*"] },
      { token: 42 },
    ]) {
      const file = await tokenFile(JSON.stringify({ support: entry }));
      await expect(dashboardTokens(file)).rejects.toThrow(UsageError);
      await expect(dashboardTokens(file)).rejects.toThrow(/scoped token/);
    }
    const short = await tokenFile(JSON.stringify({ support: { token: "short", tools: ["a"] } }));
    await expect(dashboardTokens(short)).rejects.toThrow(/shorter than 16 characters/);
  });
});
