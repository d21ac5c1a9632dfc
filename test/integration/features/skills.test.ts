import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  Agent,
  ConfigError,
  HookEvent,
  type LLMRequestData,
  SkillDefinitionError,
} from "../../../src/index.js";
import { ScriptedProvider, textResponse } from "../../../src/testing.js";
import { runToolCalls } from "../../support/feature-runs.js";
import { silent } from "../../support/silent.js";

const SKILLS = fileURLToPath(new URL("../../fixtures/skills/", import.meta.url));

let temp: string;
beforeEach(async () => {
  temp = await realpath(await mkdtemp(path.join(tmpdir(), "harnessx-skills-")));
});
afterEach(async () => {
  await rm(temp, { recursive: true, force: true });
});

/** Writes `files` (relative path → text) under the temp folder. */
async function writeTree(files: Record<string, string>): Promise<void> {
  for (const [relative, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(temp, relative)), { recursive: true });
    await writeFile(path.join(temp, relative), text);
  }
}

describe("skills in the system prompt", () => {
  it("lists each skill's name and description after the configured prompt", async () => {
    const provider = new ScriptedProvider([textResponse("ok")]);
    const agent = new Agent({
      provider,
      logger: silent,
      config: { systemPrompt: "You write reports." },
      skills: { paths: [SKILLS] },
    });
    const systems: LLMRequestData["system"][] = [];
    agent.hooks.on(HookEvent.LLM_REQUEST, ({ data }) => {
      systems.push(data.system);
    });
    await agent.run("hi");

    const system = provider.requests[0]?.system ?? "";
    expect(systems).toEqual([system]);
    expect(system.startsWith("You write reports.\n\n## Skills\n")).toBe(true);
    const listed = system.split("\n").filter((line) => line.startsWith("- "));
    expect(listed).toEqual([
      "- commit-message: Write a commit message: a short summary line, a blank line, then why.",
      "- pdf-report: Turn a table of figures into a one-page PDF report.",
    ]);
    expect(provider.requests[0]?.tools.map((each) => each.name)).toEqual(["skill", "skill_read"]);
  });

  it("adds nothing when no folder holds a SKILL.md", async () => {
    await writeTree({ "empty/README.md": "no skills here" });
    const provider = new ScriptedProvider([textResponse("ok")]);
    const agent = new Agent({ provider, logger: silent, skills: { paths: [temp] } });
    await agent.run("hi");
    expect(provider.requests[0]?.system).toBe("");
    expect(agent.tools.size).toBe(0);
  });

  it("takes a path that holds a SKILL.md itself as one skill", async () => {
    const provider = new ScriptedProvider([textResponse("ok")]);
    const agent = new Agent({
      provider,
      logger: silent,
      skills: { paths: [path.join(SKILLS, "commit-message")] },
    });
    await agent.run("hi");
    expect(provider.requests[0]?.system).toContain("- commit-message: ");
    expect(provider.requests[0]?.system).not.toContain("pdf-report");
  });
});

describe("the skill tool", () => {
  it("returns the body after the front matter and emits SKILL_INVOKED", async () => {
    const { results, events } = await runToolCalls({ skills: { paths: [SKILLS] } }, [
      { name: "skill", input: { name: "pdf-report" } },
    ]);
    const body =
      "# PDF report\n\n1. Read `reference.md` for the page layout.\n2. Fill the template with `scripts/fill.sh`.";
    expect(results[0]).toMatchObject({ isError: false, content: body });
    expect(events).toEqual([
      {
        event: HookEvent.SKILL_INVOKED,
        data: {
          skill: "pdf-report",
          found: true,
          sourcePath: await realpath(path.join(SKILLS, "pdf-report", "SKILL.md")),
          bodyChars: body.length,
        },
      },
    ]);
  });

  it("answers an unknown skill with an error result naming the available ones", async () => {
    const { results, events } = await runToolCalls({ skills: { paths: [SKILLS] } }, [
      { name: "skill", input: { name: "spreadsheet" } },
    ]);
    expect(results[0]).toMatchObject({
      isError: true,
      content: 'No skill named "spreadsheet". Available skills: commit-message, pdf-report.',
    });
    expect(events).toEqual([
      {
        event: HookEvent.SKILL_INVOKED,
        data: { skill: "spreadsheet", found: false, sourcePath: null, bodyChars: 0 },
      },
    ]);
  });
});

describe("the skill_read tool", () => {
  it("reads files next to SKILL.md, nested ones too", async () => {
    const { results } = await runToolCalls({ skills: { paths: [SKILLS] } }, [
      { name: "skill_read", input: { name: "pdf-report", path: "reference.md" } },
      { name: "skill_read", input: { name: "pdf-report", path: "scripts/fill.sh" } },
    ]);
    expect(results.map((each) => each.isError)).toEqual([false, false]);
    expect(results[0]?.content).toBe(
      await readFile(path.join(SKILLS, "pdf-report", "reference.md"), "utf8"),
    );
    expect(results[1]?.content).toContain('echo "filling $1"');
  });

  it("refuses '..', absolute paths, folders and missing files", async () => {
    const { results } = await runToolCalls({ skills: { paths: [SKILLS] } }, [
      { name: "skill_read", input: { name: "pdf-report", path: "../commit-message/SKILL.md" } },
      { name: "skill_read", input: { name: "pdf-report", path: "scripts/../reference.md" } },
      {
        name: "skill_read",
        input: { name: "pdf-report", path: path.join(SKILLS, "pdf-report", "reference.md") },
      },
      { name: "skill_read", input: { name: "pdf-report", path: "scripts" } },
      { name: "skill_read", input: { name: "pdf-report", path: "missing.md" } },
      { name: "skill_read", input: { name: "nope", path: "reference.md" } },
    ]);
    expect(results.map((each) => each.isError)).toEqual([true, true, true, true, true, true]);
    expect(results[0]?.content).toMatch(/is outside the folder of skill "pdf-report"/);
    expect(results[1]?.content).toMatch(/is outside/);
    expect(results[2]?.content).toMatch(/is outside/);
    expect(results[3]?.content).toMatch(/is not a file/);
    expect(results[4]?.content).toMatch(/^No file "missing.md"/);
    expect(results[5]?.content).toMatch(/^No skill named "nope"/);
  });

  it("refuses a symlink that resolves outside the skill's folder, follows one inside", async () => {
    await writeTree({
      "secret.txt": "TOP-SECRET",
      "skills/linky/SKILL.md": "---\nname: linky\ndescription: Has links.\n---\nBody.",
      "skills/linky/notes.md": "inside notes",
    });
    const skill = path.join(temp, "skills", "linky");
    await symlink(path.join(temp, "secret.txt"), path.join(skill, "leak.txt"));
    await symlink(temp, path.join(skill, "up"));
    await symlink(path.join(skill, "notes.md"), path.join(skill, "alias.md"));
    const { results } = await runToolCalls({ skills: { paths: [path.join(temp, "skills")] } }, [
      { name: "skill_read", input: { name: "linky", path: "leak.txt" } },
      { name: "skill_read", input: { name: "linky", path: "up/secret.txt" } },
      { name: "skill_read", input: { name: "linky", path: "alias.md" } },
    ]);
    expect(results.map((each) => each.isError)).toEqual([true, true, false]);
    expect(results.slice(0, 2).map((each) => each.content)).not.toContain("TOP-SECRET");
    expect(results[0]?.content).toMatch(/is outside/);
    expect(results[1]?.content).toMatch(/is outside/);
    expect(results[2]?.content).toBe("inside notes");
  });
});

describe("bad skills", () => {
  const construct = (paths: string[]) => () => new Agent({ logger: silent, skills: { paths } });

  it.each([
    {
      problem: "YAML that does not parse",
      text: "---\nname: [broken\n---\nBody",
      says: /not valid YAML/,
    },
    { problem: "no description", text: "---\nname: lonely\n---\nBody", says: /description: / },
    {
      problem: "a bad name",
      text: "---\nname: has spaces\ndescription: d\n---\n",
      says: /name: use 1-64/,
    },
    { problem: "no front matter", text: "# Just a heading\n", says: /no front matter/ },
    {
      problem: "front matter that is not a mapping",
      text: "---\n- a\n- b\n---\n",
      says: /invalid front matter/,
    },
  ])("$problem is a SkillDefinitionError naming the file", async ({ text, says }) => {
    await writeTree({ "bad/SKILL.md": text });
    const file = path.join(temp, "bad", "SKILL.md");
    const error = (() => {
      try {
        construct([temp])();
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(SkillDefinitionError);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "config_invalid", file, name: "SkillDefinitionError" });
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(says);
  });

  it("refuses two skills with one name, naming both files", async () => {
    const text = "---\nname: twin\ndescription: d\n---\n";
    await writeTree({ "a/SKILL.md": text, "b/SKILL.md": text });
    expect(construct([temp])).toThrow(
      `Skill file ${path.join(temp, "b", "SKILL.md")}: the name "twin" is already used by ${path.join(temp, "a", "SKILL.md")}.`,
    );
  });

  it.each([
    { options: { paths: [] }, says: "Invalid skills: paths: " },
    { options: { paths: "skills" }, says: "Invalid skills: paths: " },
    { options: { paths: ["./skills"], extra: true }, says: "Invalid skills: (input): " },
    { options: "./skills", says: "Invalid skills: (input): " },
  ])("refuses the option $options with a ConfigError", ({ options, says }) => {
    // Deliberately malformed input, as a JavaScript caller could pass it.
    const bad = options as never;
    expect(() => new Agent({ skills: bad })).toThrow(ConfigError);
    expect(() => new Agent({ skills: bad })).toThrow(says);
  });

  it("refuses a path that is not a folder", () => {
    const missing = path.join(temp, "missing");
    expect(construct([SKILLS, missing])).toThrow(
      `Invalid skills: paths.1: ${missing} is not a folder.`,
    );
  });
});
