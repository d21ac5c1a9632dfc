import { HarnessError, type HarnessErrorOptions } from "../core/errors.js";

/**
 * An extension could not be installed (its `install` threw, or its name is taken), or its saved
 * state was used where no session is known. Nothing of a failed install stays installed.
 */
export class ExtensionError extends HarnessError {
  override name = "ExtensionError";
  /** The extension concerned. */
  readonly extension: string;

  constructor(extension: string, message: string, options?: HarnessErrorOptions) {
    super("extension_failed", message, options);
    this.extension = extension;
  }
}
