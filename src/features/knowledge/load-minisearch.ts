import type MiniSearchClass from "minisearch";
import { type LazyPackage, lazyValue, requireOptional } from "../../core/optional-dependency.js";

/** The full-text index of knowledge bundles, loaded when the first bundle is indexed. */
export const MINISEARCH: LazyPackage = {
  feature: "Knowledge bundles (search)",
  packages: [{ name: "minisearch", range: "^7.2.0" }],
};

/** MiniSearch's class, loaded on its first `new`: import it from here, not from "minisearch". */
export const MiniSearch: typeof MiniSearchClass = lazyValue(() =>
  // Its CommonJS build exports the class itself.
  requireOptional<typeof MiniSearchClass>(MINISEARCH),
);
export type MiniSearch<T> = MiniSearchClass<T>;
