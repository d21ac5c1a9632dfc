import { HarnessError, type HarnessErrorOptions } from "./errors.js";

/** An optional package a feature needs (SPEC §15): its name and the versions harnessx supports. */
export interface OptionalPackage {
  /** The package's name, such as "openai". */
  name: string;
  /** The range to install, as in harnessx's `peerDependencies`, such as "^6.49.0". */
  range: string;
}

export interface DependencyMissingErrorOptions extends HarnessErrorOptions {
  /** What needed the packages, for the message, such as "openaiProvider". */
  feature: string;
  /** Every package the feature needs, missing or not: the command installs them together. */
  packages: readonly OptionalPackage[];
}

/**
 * A feature was used without the optional package it needs (the provider SDKs, the MCP SDK, the
 * dashboard's express and bull-board). The message names the `npm install` command; so does
 * `install`.
 * @example
 * // openai not installed: the first call fails with
 * // code "dependency_missing", install 'npm install "openai@^6.49.0"'
 * await openaiProvider({ model: "gpt-5-mini" }).complete(request);
 */
export class DependencyMissingError extends HarnessError {
  override name = "DependencyMissingError";
  declare readonly code: "dependency_missing";
  /** The names of the packages the feature needs. */
  readonly packages: readonly string[];
  /** The command that installs them, such as `npm install "openai@^6.49.0"`. */
  readonly install: string;

  constructor(options: DependencyMissingErrorOptions) {
    const { feature, packages, ...rest } = options;
    const install = `npm install ${packages.map(({ name, range }) => `"${name}@${range}"`).join(" ")}`;
    const names = packages.map(({ name }) => name).join(" and ");
    super(
      "dependency_missing",
      `${feature} needs ${names}, an optional dependency of harnessx that is not installed: run \`${install}\`.`,
      rest,
    );
    this.packages = packages.map(({ name }) => name);
    this.install = install;
  }
}

/**
 * True when `error` says that `name` itself (or a file of it) cannot be found, by `import` or by
 * `require`; a package that is there but fails as it loads is another error.
 */
export function isMissingPackage(error: unknown, name: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  return error.message.includes(`'${name}'`) || error.message.includes(`'${name}/`);
}
