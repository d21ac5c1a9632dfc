import { z } from "zod";
import { fsPromises } from "../../core/node-builtins.js";
import { HookEvent } from "../../hooks/events.js";
import { type Tool, tool } from "../../tools/tool.js";
import { describeRefusal, resolveContained } from "../contained-path.js";
import type { EmitHook } from "../feature-parts.js";
import type { Skill } from "./load-skills.js";

const unknownSkill = (name: string, skills: ReadonlyMap<string, Skill>): Error =>
  new Error(
    `No skill named ${JSON.stringify(name)}. Available skills: ${[...skills.keys()].join(", ") || "none"}.`,
  );

/** The `skill` tool: returns a skill's instructions and emits `SKILL_INVOKED`. */
export function skillTool(skills: ReadonlyMap<string, Skill>, emit: EmitHook): Tool<unknown> {
  return tool({
    name: "skill",
    description:
      "Load the instructions of a skill listed in the system prompt, by its name. Call it before doing a task the skill covers.",
    input: z.object({ name: z.string().describe("The skill's name, as listed.") }),
    handler: async ({ name }) => {
      const skill = skills.get(name);
      await emit(HookEvent.SKILL_INVOKED, {
        skill: name,
        found: skill !== undefined,
        sourcePath: skill?.sourcePath ?? null,
        bodyChars: skill?.body.length ?? 0,
      });
      if (skill === undefined) throw unknownSkill(name, skills);
      return skill.body;
    },
  });
}

/** The `skill_read` tool: reads a file in a skill's folder, never outside it. */
export function skillReadTool(skills: ReadonlyMap<string, Skill>): Tool<unknown> {
  return tool({
    name: "skill_read",
    description:
      "Read a file that a skill's instructions refer to, by the skill's name and the file's path relative to the skill's folder.",
    input: z.object({
      name: z.string().describe("The skill's name."),
      path: z.string().describe("A relative path inside the skill's folder, e.g. reference.md."),
    }),
    handler: async ({ name, path }) => {
      const skill = skills.get(name);
      if (skill === undefined) throw unknownSkill(name, skills);
      const found = await resolveContained(skill.directory, path);
      if (!found.ok) {
        throw new Error(describeRefusal(found.reason, path, `the folder of skill "${name}"`));
      }
      return fsPromises.readFile(found.file, "utf8");
    },
  });
}
