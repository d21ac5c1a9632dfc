import { ConfigError } from "../core/errors.js";
import { fsPromises, path, realpathSync, statSync } from "../core/node-builtins.js";

/** A file found inside a root folder, or why it was refused. */
export type ContainedFile =
  | { ok: true; file: string }
  | { ok: false; reason: "outside" | "missing" | "not_a_file" };

/** True when `candidate` (already resolved) is `root` or lies under it. */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/**
 * Resolves `relative` against `root` (a real path) without ever leaving it: absolute paths and
 * `..` segments are refused before the file system is touched, and symlinks are resolved with
 * `realpath` so a link pointing outside the root is refused too.
 */
export async function resolveContained(root: string, relative: string): Promise<ContainedFile> {
  if (relative === "" || relative.includes("\0")) return { ok: false, reason: "missing" };
  if (path.isAbsolute(relative) || path.win32.isAbsolute(relative)) {
    return { ok: false, reason: "outside" };
  }
  if (relative.split(/[\\/]/).includes("..")) return { ok: false, reason: "outside" };
  let real: string;
  try {
    real = await fsPromises.realpath(path.join(root, relative));
  } catch {
    return { ok: false, reason: "missing" };
  }
  if (!isInside(root, real)) return { ok: false, reason: "outside" };
  const info = await fsPromises.stat(real);
  return info.isFile() ? { ok: true, file: real } : { ok: false, reason: "not_a_file" };
}

/** The message a tool reports for a refused path. */
export function describeRefusal(
  reason: Exclude<ContainedFile, { ok: true }>["reason"],
  relative: string,
  where: string,
): string {
  switch (reason) {
    case "outside":
      return `Path ${JSON.stringify(relative)} is outside ${where}; only relative paths inside it can be read.`;
    case "missing":
      return `No file ${JSON.stringify(relative)} in ${where}.`;
    case "not_a_file":
      return `${JSON.stringify(relative)} in ${where} is not a file.`;
  }
}

/** The real path of a configured folder; a path that is not a folder is a ConfigError. */
export function requireFolder(given: string, option: string): string {
  const folder = path.resolve(given);
  if (!(statSync(folder, { throwIfNoEntry: false })?.isDirectory() ?? false)) {
    throw new ConfigError(`Invalid ${option}: ${folder} is not a folder.`);
  }
  return realpathSync(folder);
}
