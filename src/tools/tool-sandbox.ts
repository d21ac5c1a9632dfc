/**
 * What a tool handler may ask of the agent's sandbox (`ctx.sandbox`). Declared here, below the
 * features, so that tools do not import the sandbox feature; the features' `Sandbox` implements it.
 */
export interface ToolSandbox {
  /** The tier calls run in (`"process"` or `"bubblewrap"`), settled on first use. */
  tier(): Promise<string>;
  /** Runs code in one of the sandbox's languages. */
  execute(
    code: string,
    options: { language: "javascript" | "bash" | "python"; signal?: AbortSignal },
  ): Promise<ToolSandboxResult>;
  /** Runs a shell command line with bash in the work folder. */
  executeCommand(command: string, options?: { signal?: AbortSignal }): Promise<ToolSandboxResult>;
}

/** What one sandbox call produced. */
export interface ToolSandboxResult {
  stdout: string;
  stderr: string;
  /** `null` when the program ended by a signal (killed at the timeout, for one). */
  exitCode: number | null;
  timedOut: boolean;
  executionTimeMs: number;
}
