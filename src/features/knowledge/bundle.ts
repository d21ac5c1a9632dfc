import { fsPromises } from "../../core/node-builtins.js";
import { describeRefusal, resolveContained } from "../contained-path.js";
import { isDocumentPath, listDocuments } from "./list-documents.js";
import { type BundleHit, SearchIndex } from "./search-index.js";

/** The outcome of reading one document of a bundle. */
export type ReadOutcome = { ok: true; body: string } | { ok: false; message: string };

/**
 * A named folder of .md / .txt documents. Its search index is built lazily, on the first
 * search, and then reused for the life of the agent: files added or changed later are not
 * searched until a new agent is built (reads always see the current file).
 */
export class KnowledgeBundle {
  readonly name: string;
  /** The real path of the folder. */
  readonly root: string;
  #index: Promise<SearchIndex> | undefined;

  constructor(name: string, root: string) {
    this.name = name;
    this.root = root;
  }

  /** The bundle's index, built on first use; a failed build is tried again next time. */
  index(): Promise<SearchIndex> {
    this.#index ??= buildIndex(this.root).catch((error: unknown) => {
      this.#index = undefined;
      throw error;
    });
    return this.#index;
  }

  async search(query: string, limit: number): Promise<BundleHit[]> {
    return (await this.index()).search(query, limit);
  }

  /** Reads a document by its path in the bundle; never a file outside it. */
  async read(relative: string): Promise<ReadOutcome> {
    const where = `knowledge bundle "${this.name}"`;
    const found = await resolveContained(this.root, relative);
    if (!found.ok) return { ok: false, message: describeRefusal(found.reason, relative, where) };
    if (!isDocumentPath(found.file)) {
      return {
        ok: false,
        message: `${JSON.stringify(relative)} in ${where} is not a .md or .txt document.`,
      };
    }
    return { ok: true, body: await fsPromises.readFile(found.file, "utf8") };
  }
}

// Files read at a time while indexing: enough to overlap I/O, few enough to stay far from EMFILE.
const READ_BATCH = 64;

async function buildIndex(root: string): Promise<SearchIndex> {
  const files = await listDocuments(root);
  const documents: { path: string; text: string }[] = [];
  for (let at = 0; at < files.length; at += READ_BATCH) {
    const batch = files.slice(at, at + READ_BATCH);
    documents.push(
      ...(await Promise.all(
        batch.map(async (each) => ({
          path: each.path,
          text: await fsPromises.readFile(each.file, "utf8"),
        })),
      )),
    );
  }
  return SearchIndex.build(documents);
}
