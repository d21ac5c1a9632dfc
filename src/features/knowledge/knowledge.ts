import { z } from "zod";
import { lazySchema } from "../../core/lazy-schema.js";
import { requireFolder } from "../contained-path.js";
import { type EmitHook, type FeatureParts, parseOption } from "../feature-parts.js";
import { KnowledgeBundle } from "./bundle.js";
import { knowledgeReadTool, knowledgeSearchTool } from "./knowledge-tools.js";

/** One knowledge bundle: a name the model uses and a folder of .md / .txt files. */
export const KnowledgeBundleOptions = lazySchema(() =>
  z.strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "use 1-64 letters, digits, '_', '.' or '-'"),
    /** A folder; a relative path resolves against the working directory. */
    path: z.string().min(1),
  }),
);
export type KnowledgeBundleOptions = z.input<typeof KnowledgeBundleOptions>;

/** `new Agent({ knowledge })`: the bundles, with distinct names. */
export const KnowledgeOptions = lazySchema(() =>
  z.array(KnowledgeBundleOptions).superRefine((bundles, context) => {
    const seen = new Set<string>();
    bundles.forEach((bundle, index) => {
      if (seen.has(bundle.name)) {
        context.addIssue({
          code: "custom",
          path: [index, "name"],
          message: `the bundle name "${bundle.name}" is used twice`,
        });
      }
      seen.add(bundle.name);
    });
  }),
);
export type KnowledgeOptions = z.input<typeof KnowledgeOptions>;

/**
 * Checks the bundles' folders and makes the `knowledge_search` and `knowledge_read` tools.
 * Each bundle's index is built lazily, on its first search, and reused. Nothing when
 * `options` is undefined or empty.
 * @throws ConfigError for bad options or a path that is not a folder.
 */
export function createKnowledge(options: unknown, emit: EmitHook): FeatureParts {
  if (options === undefined) return { tools: [] };
  const parsed = parseOption(KnowledgeOptions, options, "knowledge");
  if (parsed.length === 0) return { tools: [] };
  const bundles = new Map(
    parsed.map((each, index) => {
      const root = requireFolder(each.path, `knowledge: ${index}.path`);
      return [each.name, new KnowledgeBundle(each.name, root)] as const;
    }),
  );
  return { tools: [knowledgeSearchTool(bundles, emit), knowledgeReadTool(bundles, emit)] };
}
