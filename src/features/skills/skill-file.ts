import { z } from "zod";
import { lazySchema } from "../../core/lazy-schema.js";
import { describeIssues } from "../../tools/validate.js";
import { SkillDefinitionError } from "./errors.js";
import { parseYaml } from "./load-yaml.js";

/** The front matter every SKILL.md starts with; other keys are kept but not used. */
export const SkillFrontMatter = lazySchema(() =>
  z.looseObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, "use 1-64 letters, digits, '_' or '-'"),
    description: z.string().trim().min(1).max(1024),
  }),
);
export type SkillFrontMatter = z.infer<typeof SkillFrontMatter>;

// Only the delimiters are found here; the YAML between them is parsed by the `yaml` package.
const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;

/** Splits and validates a SKILL.md's text; `file` only names the file in errors. */
export function parseSkillFile(
  text: string,
  file: string,
): { frontMatter: SkillFrontMatter; body: string } {
  const match = FRONT_MATTER.exec(text);
  if (match === null) {
    throw new SkillDefinitionError(
      file,
      "no front matter: the file must start with a '---' line, YAML with name and description, and a closing '---' line.",
    );
  }
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? "");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SkillDefinitionError(file, `front matter is not valid YAML: ${reason}`);
  }
  const parsed = SkillFrontMatter.safeParse(data ?? {});
  if (!parsed.success) {
    throw new SkillDefinitionError(
      file,
      `invalid front matter: ${describeIssues(parsed.error.issues)}`,
    );
  }
  return { frontMatter: parsed.data, body: text.slice(match[0].length).trim() };
}
