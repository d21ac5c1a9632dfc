import { z } from "zod";
import { HookEvent } from "../../hooks/events.js";
import { type Tool, tool } from "../../tools/tool.js";
import type { EmitHook } from "../feature-parts.js";
import type { KnowledgeBundle } from "./bundle.js";

/** Hits `knowledge_search` returns when the model does not say. */
export const DEFAULT_SEARCH_LIMIT = 5;
/** The most hits one `knowledge_search` call returns. */
export const MAX_SEARCH_LIMIT = 50;

/** One ranked hit of `knowledge_search`. */
export interface KnowledgeHit {
  bundle: string;
  path: string;
  score: number;
  snippet: string;
}

const unknownBundle = (name: string, bundles: ReadonlyMap<string, KnowledgeBundle>): Error =>
  new Error(
    `No knowledge bundle named ${JSON.stringify(name)}. Bundles: ${[...bundles.keys()].join(", ")}.`,
  );

/** Ranked hits across `bundles`, best first; ties in path order. */
export async function searchBundles(
  bundles: readonly KnowledgeBundle[],
  query: string,
  limit: number,
): Promise<KnowledgeHit[]> {
  const perBundle = await Promise.all(
    bundles.map(async (bundle) =>
      (await bundle.search(query, limit)).map((hit) => ({ bundle: bundle.name, ...hit })),
    ),
  );
  return perBundle
    .flat()
    .sort(
      (left, right) =>
        right.score - left.score ||
        left.bundle.localeCompare(right.bundle) ||
        left.path.localeCompare(right.path),
    )
    .slice(0, limit);
}

/** `knowledge_search`: ranked full-text search over every bundle, or one. */
export function knowledgeSearchTool(
  bundles: ReadonlyMap<string, KnowledgeBundle>,
  emit: EmitHook,
): Tool<unknown> {
  return tool({
    name: "knowledge_search",
    description: `Search the knowledge bundles (${[...bundles.keys()].join(", ")}) for documents about a query. Returns ranked hits with a snippet; read a whole document with knowledge_read.`,
    input: z.object({
      query: z.string().trim().min(1).describe("Words to look for."),
      bundle: z.string().optional().describe("Search only this bundle."),
      limit: z
        .number()
        .int()
        .min(1)
        .max(MAX_SEARCH_LIMIT)
        .optional()
        .describe(`Most hits to return (default ${DEFAULT_SEARCH_LIMIT}).`),
    }),
    handler: async ({ query, bundle, limit }) => {
      const only = bundle === undefined ? undefined : bundles.get(bundle);
      const unknown = bundle !== undefined && only === undefined;
      const hits = unknown
        ? []
        : await searchBundles(
            only === undefined ? [...bundles.values()] : [only],
            query,
            limit ?? DEFAULT_SEARCH_LIMIT,
          );
      await emit(HookEvent.KNOWLEDGE_ACCESSED, {
        tool: "knowledge_search",
        bundle: bundle ?? null,
        found: hits.length > 0,
        query,
        hits: hits.length,
      });
      if (unknown) throw unknownBundle(bundle, bundles);
      return hits;
    },
  });
}

/** `knowledge_read`: one document's text, by bundle and path; never a file outside the bundle. */
export function knowledgeReadTool(
  bundles: ReadonlyMap<string, KnowledgeBundle>,
  emit: EmitHook,
): Tool<unknown> {
  return tool({
    name: "knowledge_read",
    description:
      "Read a whole document of a knowledge bundle, by the bundle's name and the path a knowledge_search hit gave.",
    input: z.object({
      bundle: z.string().describe("The bundle's name."),
      path: z.string().describe("The document's path inside the bundle, as search returned it."),
    }),
    handler: async ({ bundle, path }) => {
      const chosen = bundles.get(bundle);
      const outcome = chosen === undefined ? undefined : await chosen.read(path);
      await emit(HookEvent.KNOWLEDGE_ACCESSED, {
        tool: "knowledge_read",
        bundle,
        found: outcome?.ok === true,
        path,
        bodyChars: outcome?.ok === true ? outcome.body.length : 0,
      });
      if (outcome === undefined) throw unknownBundle(bundle, bundles);
      if (!outcome.ok) throw new Error(outcome.message);
      return outcome.body;
    },
  });
}
