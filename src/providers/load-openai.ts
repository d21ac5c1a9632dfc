import { importOptional, type LazyPackage } from "../core/optional-dependency.js";

/** openaiProvider's SDK: an optional peer dependency, loaded on the provider's first call. */
export const OPENAI_SDK: LazyPackage = {
  feature: "openaiProvider",
  packages: [{ name: "openai", range: "^6.49.0" }],
};

/** The OpenAI SDK's module; `DependencyMissingError` when it is not installed. */
export const loadOpenAI = () => importOptional(OPENAI_SDK, () => import("openai"));
