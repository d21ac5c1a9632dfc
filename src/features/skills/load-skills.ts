import {
  path,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
} from "../../core/node-builtins.js";
import { requireFolder } from "../contained-path.js";
import { SkillDefinitionError } from "./errors.js";
import { parseSkillFile } from "./skill-file.js";

/** A loaded skill. */
export interface Skill {
  name: string;
  description: string;
  /** The instructions after the front matter. */
  body: string;
  /** The real path of the skill's folder: `skill_read` never leaves it. */
  directory: string;
  /** The real path of its SKILL.md. */
  sourcePath: string;
}

const SKILL_FILE = "SKILL.md";

const isFile = (file: string): boolean =>
  statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;

/**
 * Finds the skills under each path: the path itself when it holds a SKILL.md, otherwise each
 * folder directly inside it that holds one (in name order). Reads the files synchronously, once.
 */
export function loadSkills(paths: readonly string[]): Skill[] {
  const byName = new Map<string, Skill>();
  paths.forEach((given, index) => {
    const folder = requireFolder(given, `skills: paths.${index}`);
    for (const directory of skillFolders(folder)) {
      const skill = loadSkill(directory);
      const existing = byName.get(skill.name);
      if (existing !== undefined) {
        throw new SkillDefinitionError(
          skill.sourcePath,
          `the name "${skill.name}" is already used by ${existing.sourcePath}.`,
        );
      }
      byName.set(skill.name, skill);
    }
  });
  return [...byName.values()];
}

function skillFolders(folder: string): string[] {
  if (isFile(path.join(folder, SKILL_FILE))) return [folder];
  return readdirSync(folder)
    .sort()
    .map((entry) => path.join(folder, entry))
    .filter((entry) => isFile(path.join(entry, SKILL_FILE)));
}

function loadSkill(folder: string): Skill {
  const directory = realpathSync(folder);
  const sourcePath = path.join(directory, SKILL_FILE);
  const { frontMatter, body } = parseSkillFile(readFileSync(sourcePath, "utf8"), sourcePath);
  return {
    name: frontMatter.name,
    description: frontMatter.description,
    body,
    directory,
    sourcePath,
  };
}
