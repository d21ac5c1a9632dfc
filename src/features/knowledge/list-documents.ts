import type { Dirent } from "node:fs";
import { fsPromises as fs, path } from "../../core/node-builtins.js";
import { isInside } from "../contained-path.js";

/** File kinds a bundle holds. */
export const DOCUMENT_EXTENSIONS: readonly string[] = [".md", ".txt"];

export const isDocumentPath = (file: string): boolean =>
  DOCUMENT_EXTENSIONS.includes(path.extname(file).toLowerCase());

/** A document of a bundle: its path relative to the bundle (with `/`) and its real path. */
export interface DocumentFile {
  path: string;
  file: string;
}

/**
 * Every .md / .txt file under `root` (a real path), in path order. Symlinks are followed only
 * when they resolve inside the root; each folder is visited once, so link cycles end.
 */
export async function listDocuments(root: string): Promise<DocumentFile[]> {
  const found: DocumentFile[] = [];
  const visited = new Set<string>([root]);
  const walk = async (folder: string, prefix: string): Promise<void> => {
    const entries = await fs.readdir(folder, { withFileTypes: true });
    entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const entry of entries) {
      const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      const target = await resolveEntry(folder, entry, root);
      if (target === undefined) continue;
      if (target.kind === "folder") {
        if (visited.has(target.real)) continue;
        visited.add(target.real);
        await walk(target.real, relative);
      } else if (isDocumentPath(entry.name)) {
        found.push({ path: relative, file: target.real });
      }
    }
  };
  await walk(root, "");
  return found;
}

async function resolveEntry(
  folder: string,
  entry: Dirent,
  root: string,
): Promise<{ kind: "file" | "folder"; real: string } | undefined> {
  const full = path.join(folder, entry.name);
  if (entry.isFile()) return { kind: "file", real: full };
  if (entry.isDirectory()) return { kind: "folder", real: full };
  if (!entry.isSymbolicLink()) return undefined;
  try {
    const real = await fs.realpath(full);
    if (!isInside(root, real)) return undefined;
    const info = await fs.stat(real);
    if (info.isDirectory()) return { kind: "folder", real };
    return info.isFile() ? { kind: "file", real } : undefined;
  } catch {
    return undefined;
  }
}
