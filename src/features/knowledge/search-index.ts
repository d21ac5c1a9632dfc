import { MiniSearch } from "./load-minisearch.js";
import { makeSnippet } from "./snippet.js";

/** A document to index: its path in the bundle and its text. */
export interface IndexedDocument {
  path: string;
  text: string;
}

/** One ranked match inside a bundle. */
export interface BundleHit {
  path: string;
  score: number;
  snippet: string;
}

interface Entry {
  id: number;
  title: string;
  text: string;
}

// The first Markdown heading, or the file name without its extension.
const titleOf = (document: IndexedDocument): string =>
  /^#{1,6}[ \t]+(.+)$/m.exec(document.text)?.[1]?.trim() ??
  (document.path.split("/").pop() ?? document.path).replace(/\.[^.]+$/, "");

// Words of 5+ characters may differ by one edit in five (two at most).
const FUZZY = { fuzzy: (term: string) => (term.length >= 5 ? 0.2 : false), maxFuzzy: 2 };

/**
 * A BM25 full-text index (MiniSearch) of one bundle. Titles weigh double; query terms of 3+
 * characters also match as prefixes, and terms of 5+ characters tolerate a typo or two when
 * there are too few hits without.
 */
export class SearchIndex {
  readonly #search: MiniSearch<Entry>;
  readonly #documents: readonly IndexedDocument[];

  private constructor(search: MiniSearch<Entry>, documents: readonly IndexedDocument[]) {
    this.#search = search;
    this.#documents = documents;
  }

  /**
   * Indexes `documents` in chunks, yielding to the event loop between them: building a large
   * bundle's index does not stall the other runs and the job locks of the same process.
   */
  static async build(documents: readonly IndexedDocument[]): Promise<SearchIndex> {
    const search = new MiniSearch<Entry>({
      fields: ["title", "text"],
      searchOptions: { boost: { title: 2 }, prefix: (term) => term.length >= 3 },
    });
    await search.addAllAsync(
      documents.map((document, id) => ({ id, title: titleOf(document), text: document.text })),
      { chunkSize: 100 },
    );
    return new SearchIndex(search, documents);
  }

  /**
   * The best `limit` matches, best first. Typos are tolerated only when exact and prefix
   * matches give fewer than `limit` hits: fuzzy matching costs ten times more on a large index.
   */
  search(query: string, limit: number): BundleHit[] {
    let results = this.#search.search(query);
    if (results.length < limit) results = this.#search.search(query, FUZZY);
    return results.slice(0, limit).map((result) => {
      const document = this.#documents[result.id as number] as IndexedDocument;
      return {
        path: document.path,
        score: Math.round(result.score * 1000) / 1000,
        snippet: makeSnippet(document.text, [...result.queryTerms, ...result.terms]),
      };
    });
  }
}
