import { type LazyPackage, requireOptional } from "../../core/optional-dependency.js";

/** The YAML parser of SKILL.md front matter, loaded when the first skill file is read. */
export const YAML: LazyPackage = {
  feature: "Skills (SKILL.md front matter)",
  packages: [{ name: "yaml", range: "^2.9.1" }],
};

/** `yaml`'s `parse`, loading the package on its first call. */
export function parseYaml(text: string): unknown {
  return requireOptional<typeof import("yaml")>(YAML).parse(text);
}
