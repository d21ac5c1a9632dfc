import { z } from "zod";
import { lazySchema } from "../../core/lazy-schema.js";
import { type EmitHook, type FeatureParts, parseOption } from "../feature-parts.js";
import { loadSkills, type Skill } from "./load-skills.js";
import { skillReadTool, skillTool } from "./skill-tools.js";

/** `new Agent({ skills })`: where to find skills. */
export const SkillsOptions = lazySchema(() =>
  z.strictObject({
    /**
     * Folders of skills: each folder inside holding a SKILL.md is one skill (a path that holds a
     * SKILL.md itself is one skill too). Relative paths resolve against the working directory.
     */
    paths: z.array(z.string().min(1)).min(1),
  }),
);
export type SkillsOptions = z.input<typeof SkillsOptions>;

/** The system-prompt section that lists the skills by name and description. */
export function renderSkillList(skills: readonly Skill[]): string {
  const lines = skills.map((skill) => `- ${skill.name}: ${skill.description}`);
  return [
    "## Skills",
    "Call the `skill` tool with a skill's name to load its instructions before a task it covers; `skill_read` reads the files in the skill's folder.",
    ...lines,
  ].join("\n");
}

/**
 * Loads the skills (synchronously, once) and makes the `skill` and `skill_read` tools and the
 * prompt section listing them. Nothing when `options` is undefined or no skill is found.
 * @throws ConfigError for bad options; SkillDefinitionError for a bad SKILL.md.
 */
export function createSkills(options: unknown, emit: EmitHook): FeatureParts {
  if (options === undefined) return { tools: [] };
  const parsed = parseOption(SkillsOptions, options, "skills");
  const skills = loadSkills(parsed.paths);
  if (skills.length === 0) return { tools: [] };
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const prompt = renderSkillList(skills);
  return { tools: [skillTool(byName, emit), skillReadTool(byName)], promptProvider: () => prompt };
}
