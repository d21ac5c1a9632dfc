import { describe, expect, it } from "vitest";
import { parseSkillFile } from "../../../../src/features/skills/skill-file.js";
import { SkillDefinitionError } from "../../../../src/index.js";

describe("parseSkillFile", () => {
  it("reads front matter with CRLF line ends and a byte-order mark, keeping extra keys", () => {
    const text =
      "\uFEFF---\r\nname: csv\r\ndescription: >\r\n  Clean CSV files.\r\nversion: 2\r\n---\r\n\r\nBody line.\r\n";
    expect(parseSkillFile(text, "/s/csv/SKILL.md")).toEqual({
      frontMatter: { name: "csv", description: "Clean CSV files.", version: 2 },
      body: "Body line.",
    });
  });

  it("accepts an empty body", () => {
    expect(parseSkillFile("---\nname: a\ndescription: b\n---", "f").body).toBe("");
  });

  it("refuses an empty front matter block, naming the missing keys", () => {
    expect(() => parseSkillFile("---\n---\nBody", "/s/x/SKILL.md")).toThrow(SkillDefinitionError);
    expect(() => parseSkillFile("---\n---\nBody", "/s/x/SKILL.md")).toThrow(
      /^Skill file \/s\/x\/SKILL\.md: invalid front matter: name: .*; description: /,
    );
  });
});
