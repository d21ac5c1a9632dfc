import type Express from "express";
import { type LazyPackage, lazyValue, requireOptional } from "../core/optional-dependency.js";

/** The dashboard's HTTP framework: an optional peer dependency, loaded by `createDashboard`. */
export const EXPRESS: LazyPackage = {
  feature: "createDashboard",
  packages: [{ name: "express", range: "^5.3.0" }],
};

/**
 * express, loaded when the first dashboard is made (synchronously: `createDashboard` is); used
 * as the package's default export is. `DependencyMissingError` when it is not installed.
 */
export const express: typeof Express = lazyValue(() => requireOptional<typeof Express>(EXPRESS));

/** express's `Router`, loaded with it. */
export const Router: typeof Express.Router = lazyValue(() => express.Router);
export type Router = Express.Router;
