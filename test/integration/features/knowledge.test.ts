import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  Agent,
  ConfigError,
  HookEvent,
  type KnowledgeHit,
  MAX_SEARCH_LIMIT,
} from "../../../src/index.js";
import { runToolCalls, type SeenEvent } from "../../support/feature-runs.js";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../fixtures/knowledge/${name}/`, import.meta.url));
const knowledge = [
  { name: "handbook", path: fixture("handbook") },
  { name: "recipes", path: fixture("recipes") },
];

const search = (input: Record<string, unknown>) => ({ name: "knowledge_search", input });
const read = (bundle: string, file: string) => ({
  name: "knowledge_read",
  input: { bundle, path: file },
});
const hitsOf = (content: string | undefined): KnowledgeHit[] =>
  JSON.parse(content ?? "null") as KnowledgeHit[];

const accessed = (events: readonly SeenEvent[]) =>
  events.flatMap((each) => (each.event === HookEvent.KNOWLEDGE_ACCESSED ? [each.data] : []));

let temp: string;
beforeEach(async () => {
  temp = await realpath(await mkdtemp(path.join(tmpdir(), "harnessx-knowledge-")));
});
afterEach(async () => {
  await rm(temp, { recursive: true, force: true });
});

describe("knowledge_search", () => {
  it("ranks the document about the query first and leaves out unrelated ones", async () => {
    const { results, events } = await runToolCalls({ knowledge }, [search({ query: "rollback" })]);
    const hits = hitsOf(results[0]?.content);
    expect(hits.map((hit) => `${hit.bundle}/${hit.path}`)).toEqual([
      "handbook/rollbacks.md",
      "handbook/deploys.md",
    ]);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? Number.POSITIVE_INFINITY);
    expect(hits[0]?.snippet.startsWith("# Rollback procedure A rollback returns")).toBe(true);
    // The snippet sits around the first match, far into the document.
    expect(hits[1]?.snippet).toMatch(/^….*start a rollback\.$/);
    expect(events).toEqual([
      {
        event: HookEvent.KNOWLEDGE_ACCESSED,
        data: {
          tool: "knowledge_search",
          bundle: null,
          found: true,
          query: "rollback",
          hits: 2,
        },
      },
    ]);
  });

  it("matches prefixes and tolerates a typo in a longer word", async () => {
    const { results } = await runToolCalls({ knowledge }, [
      search({ query: "sourd" }),
      search({ query: "holidyas" }),
    ]);
    expect(hitsOf(results[0]?.content).map((hit) => hit.path)).toEqual(["bread.md"]);
    expect(hitsOf(results[1]?.content)[0]?.path).toBe("holidays.md");
  });

  it("tolerates typos only when exact and prefix matches give fewer hits than asked", async () => {
    await writeFile(path.join(temp, "exact.md"), "Pay with stripe.");
    await writeFile(path.join(temp, "typo.md"), "Cut the paper into strips.");
    const { results } = await runToolCalls({ knowledge: [{ name: "kb", path: temp }] }, [
      search({ query: "stripe", limit: 1 }),
      search({ query: "stripe", limit: 5 }),
    ]);
    expect(hitsOf(results[0]?.content).map((hit) => hit.path)).toEqual(["exact.md"]);
    expect(hitsOf(results[1]?.content).map((hit) => hit.path)).toEqual(["exact.md", "typo.md"]);
  });

  it("searches one bundle when asked", async () => {
    const { results, events } = await runToolCalls({ knowledge }, [
      search({ query: "release" }),
      search({ query: "release", bundle: "recipes" }),
    ]);
    const everywhere = hitsOf(results[0]?.content).map((hit) => hit.bundle);
    expect(new Set(everywhere)).toEqual(new Set(["handbook", "recipes"]));
    expect(hitsOf(results[1]?.content).map((hit) => `${hit.bundle}/${hit.path}`)).toEqual([
      "recipes/bread.md",
    ]);
    // Calls of one turn run concurrently: their events come in any order.
    expect(events).toHaveLength(2);
    expect(accessed(events).map((data) => data.bundle)).toEqual(
      expect.arrayContaining([null, "recipes"]),
    );
  });

  it("returns at most `limit` hits, 5 by default, and refuses a limit past 50", async () => {
    const corpus = Object.fromEntries(
      Array.from({ length: 8 }, (_, index) => [`doc-${index}.md`, `Shared word number ${index}.`]),
    );
    for (const [name, text] of Object.entries(corpus)) await writeFile(path.join(temp, name), text);
    const { results } = await runToolCalls({ knowledge: [{ name: "many", path: temp }] }, [
      search({ query: "shared" }),
      search({ query: "shared", limit: 2 }),
      search({ query: "shared", limit: 50 }),
      search({ query: "shared", limit: MAX_SEARCH_LIMIT + 1 }),
      search({ query: "shared", limit: 0 }),
    ]);
    expect(hitsOf(results[0]?.content)).toHaveLength(5);
    expect(hitsOf(results[1]?.content)).toHaveLength(2);
    expect(hitsOf(results[2]?.content)).toHaveLength(8);
    expect(results[3]).toMatchObject({ isError: true });
    expect(results[3]?.content).toMatch(/limit/);
    expect(results[4]).toMatchObject({ isError: true });
  });

  it("reports no hits as found: false, and an unknown bundle as an error", async () => {
    const { results, events } = await runToolCalls({ knowledge }, [
      search({ query: "zeppelin" }),
      search({ query: "rollback", bundle: "wiki" }),
    ]);
    expect(results[0]).toMatchObject({ isError: false, content: "[]" });
    expect(results[1]).toMatchObject({
      isError: true,
      content: 'No knowledge bundle named "wiki". Bundles: handbook, recipes.',
    });
    expect(events).toHaveLength(2);
    expect(accessed(events)).toEqual(
      expect.arrayContaining([
        { tool: "knowledge_search", bundle: null, found: false, query: "zeppelin", hits: 0 },
        { tool: "knowledge_search", bundle: "wiki", found: false, query: "rollback", hits: 0 },
      ]),
    );
  });

  it("indexes a bundle once and reuses the index for later searches", async () => {
    await writeFile(path.join(temp, "first.md"), "alpha");
    const agent = new Agent({ knowledge: [{ name: "kb", path: temp }] });
    const execute = (query: string) =>
      agent.tools.execute({ id: "c", name: "knowledge_search", input: { query } });
    expect(hitsOf((await execute("alpha")).content)).toHaveLength(1);
    // A file added after the first search is not in the index this agent built.
    await writeFile(path.join(temp, "second.md"), "alpha beta");
    expect(hitsOf((await execute("beta")).content)).toEqual([]);
    const fresh = new Agent({ knowledge: [{ name: "kb", path: temp }] });
    const again = await fresh.tools.execute({
      id: "c",
      name: "knowledge_search",
      input: { query: "beta" },
    });
    expect(hitsOf(again.content).map((hit) => hit.path)).toEqual(["second.md"]);
  });
});

describe("knowledge_read", () => {
  it("returns a document's text and emits its path and size", async () => {
    const { results, events } = await runToolCalls({ knowledge }, [
      read("handbook", "faq/oncall.txt"),
    ]);
    const text = await readFile(path.join(fixture("handbook"), "faq", "oncall.txt"), "utf8");
    expect(results[0]).toMatchObject({ isError: false, content: text });
    expect(accessed(events)).toEqual([
      {
        tool: "knowledge_read",
        bundle: "handbook",
        found: true,
        path: "faq/oncall.txt",
        bodyChars: text.length,
      },
    ]);
  });

  it("refuses paths that escape the bundle, missing files and unknown bundles", async () => {
    const { results, events } = await runToolCalls({ knowledge }, [
      read("handbook", "../recipes/bread.md"),
      read("handbook", "faq/../holidays.md"),
      read("handbook", path.join(fixture("recipes"), "bread.md")),
      read("handbook", "missing.md"),
      read("handbook", "faq"),
      read("wiki", "rollbacks.md"),
    ]);
    expect(results.map((each) => each.isError)).toEqual([true, true, true, true, true, true]);
    expect(results[0]?.content).toMatch(/is outside knowledge bundle "handbook"/);
    expect(results[1]?.content).toMatch(/is outside/);
    expect(results[2]?.content).toMatch(/is outside/);
    expect(results[3]?.content).toBe('No file "missing.md" in knowledge bundle "handbook".');
    expect(results[4]?.content).toMatch(/is not a file/);
    expect(results[5]?.content).toMatch(/^No knowledge bundle named "wiki"/);
    expect(accessed(events).map((data) => data.found)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("refuses symlinks that resolve outside the bundle, in reads and in search", async () => {
    const outside = path.join(temp, "outside");
    const bundle = path.join(temp, "bundle");
    await mkdir(outside);
    await mkdir(bundle);
    await writeFile(path.join(outside, "secret.md"), "classified zeppelin plans");
    await writeFile(path.join(bundle, "inside.md"), "public notes");
    await writeFile(path.join(bundle, "config.env"), "TOKEN=1");
    await symlink(path.join(outside, "secret.md"), path.join(bundle, "leak.md"));
    await symlink(outside, path.join(bundle, "linked"));
    await symlink(path.join(bundle, "inside.md"), path.join(bundle, "alias.md"));
    await symlink(bundle, path.join(bundle, "loop"));
    const { results } = await runToolCalls({ knowledge: [{ name: "kb", path: bundle }] }, [
      read("kb", "leak.md"),
      read("kb", "linked/secret.md"),
      read("kb", "alias.md"),
      read("kb", "config.env"),
      search({ query: "zeppelin" }),
      search({ query: "public" }),
    ]);
    expect(results.map((each) => each.isError)).toEqual([true, true, false, true, false, false]);
    expect(results[0]?.content).toMatch(/is outside/);
    expect(results[1]?.content).toMatch(/is outside/);
    expect(results[2]?.content).toBe("public notes");
    expect(results[3]?.content).toMatch(/is not a \.md or \.txt document/);
    expect(hitsOf(results[4]?.content)).toEqual([]);
    // The link inside the bundle is indexed under its own path; the loop is walked once.
    expect(hitsOf(results[5]?.content).map((hit) => hit.path)).toEqual(["alias.md", "inside.md"]);
  });
});

describe("bad knowledge options", () => {
  it.each([
    { options: [{ name: "a b", path: "." }], says: "Invalid knowledge: 0.name: " },
    { options: [{ name: "kb" }], says: "Invalid knowledge: 0.path: " },
    {
      options: [
        { name: "kb", path: "." },
        { name: "kb", path: "." },
      ],
      says: '1.name: the bundle name "kb" is used twice',
    },
    { options: { name: "kb", path: "." }, says: "Invalid knowledge: (input): " },
    { options: [{ name: "kb", path: ".", extra: 1 }], says: "Invalid knowledge: 0: " },
  ])("refuses $options with a ConfigError", ({ options, says }) => {
    // Deliberately malformed input, as a JavaScript caller could pass it.
    const bad = options as never;
    expect(() => new Agent({ knowledge: bad })).toThrow(ConfigError);
    expect(() => new Agent({ knowledge: bad })).toThrow(says);
  });

  it("refuses a path that is not a folder", () => {
    const file = path.join(fixture("handbook"), "holidays.md");
    expect(() => new Agent({ knowledge: [{ name: "kb", path: file }] })).toThrow(
      `Invalid knowledge: 0.path: ${file} is not a folder.`,
    );
  });

  it("adds no tools for an empty list", () => {
    expect(new Agent({ knowledge: [] }).tools.size).toBe(0);
  });
});
