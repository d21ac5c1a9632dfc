import type * as Api from "@opentelemetry/api";
import { createRequire } from "../core/node-builtins.js";
import { lazyValue } from "../core/optional-dependency.js";

// @opentelemetry/api loads on the first span, metric or propagated context, not at
// `import "harnessx"` (its CommonJS entry is some sixty files; SPEC §15). Import its values from
// here, its types from the package.
let loaded: typeof Api | undefined;
const api = (): typeof Api => {
  loaded ??= createRequire(import.meta.url)("@opentelemetry/api") as typeof Api;
  return loaded;
};

export const trace: typeof Api.trace = lazyValue(() => api().trace);
export const context: typeof Api.context = lazyValue(() => api().context);
export const propagation: typeof Api.propagation = lazyValue(() => api().propagation);
export const metrics: typeof Api.metrics = lazyValue(() => api().metrics);
export const createNoopMeter: typeof Api.createNoopMeter = lazyValue(() => api().createNoopMeter);
export const ROOT_CONTEXT: typeof Api.ROOT_CONTEXT = lazyValue(() => api().ROOT_CONTEXT);
export const ProxyTracerProvider: typeof Api.ProxyTracerProvider = lazyValue(
  () => api().ProxyTracerProvider,
);
export const SpanKind: typeof Api.SpanKind = lazyValue(() => api().SpanKind);
export type SpanKind = Api.SpanKind;
export const SpanStatusCode: typeof Api.SpanStatusCode = lazyValue(() => api().SpanStatusCode);
