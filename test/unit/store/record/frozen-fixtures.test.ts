// Stored records of every version are frozen (STYLE.md 14): once committed, a fixture is never
// edited or regenerated in place; a new shape gets a new fixture. Each fixture's SHA-256 is in
// the committed manifest, so an edit fails here (and so in CI), and so does a fixture added
// without its line.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const folder = new URL("../../../fixtures/run-records/", import.meta.url);
const MANIFEST = "MANIFEST.sha256";

/** The manifest's lines (`sha256sum` format: "<hex>  <file name>"), by file name. */
function manifest(): Map<string, string> {
  const lines = readFileSync(new URL(MANIFEST, folder), "utf8").split("\n");
  const entries = new Map<string, string>();
  for (const line of lines.filter((each) => each.trim() !== "")) {
    const match = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
    if (match === null) throw new Error(`${MANIFEST}: not a sha256sum line: ${line}`);
    entries.set(match[2] as string, match[1] as string);
  }
  return entries;
}

const sha256 = (name: string): string =>
  createHash("sha256")
    .update(readFileSync(new URL(name, folder)))
    .digest("hex");

describe("frozen run-record fixtures", () => {
  const files = readdirSync(folder).filter((name) => name !== MANIFEST);
  const expected = manifest();

  it("lists every fixture in the manifest, and nothing the folder does not hold", () => {
    expect(files.length).toBeGreaterThan(0);
    expect([...expected.keys()].sort()).toEqual([...files].sort());
  });

  it.each(files)("keeps %s as it was committed (its SHA-256 is the manifest's)", (name) => {
    expect(sha256(name), `${name} was edited: add a new fixture instead`).toBe(expected.get(name));
  });
});
