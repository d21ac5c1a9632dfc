import { importOptional, type LazyPackage } from "../core/optional-dependency.js";

/** anthropicProvider's SDK: an optional peer dependency, loaded on the provider's first call. */
export const ANTHROPIC_SDK: LazyPackage = {
  feature: "anthropicProvider",
  packages: [{ name: "@anthropic-ai/sdk", range: "^1.16.0" }],
};

/** The Anthropic SDK's module; `DependencyMissingError` when it is not installed. */
export const loadAnthropic = () => importOptional(ANTHROPIC_SDK, () => import("@anthropic-ai/sdk"));
