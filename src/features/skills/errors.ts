import { ConfigError } from "../../core/errors.js";

/** A SKILL.md that cannot be used: missing or malformed front matter, or a duplicate name. */
export class SkillDefinitionError extends ConfigError {
  override name = "SkillDefinitionError";
  /** The SKILL.md at fault. */
  readonly file: string;

  constructor(file: string, problem: string) {
    super(`Skill file ${file}: ${problem}`);
    this.file = file;
  }
}
