import { accessSync, constants, path, statSync } from "../../core/node-builtins.js";

const { delimiter, isAbsolute, join } = path;

/** True when `path` is a file this process may execute. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first executable `name` on a PATH value (or `name` itself when it is a path). */
export function findExecutable(name: string, pathValue: string): string | undefined {
  if (isAbsolute(name)) return isExecutable(name) ? name : undefined;
  for (const folder of pathValue.split(delimiter)) {
    if (folder === "") continue;
    const candidate = join(folder, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}
