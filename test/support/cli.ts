import { execFile } from "node:child_process";

/** What a finished `harnessx` process left. */
export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

const root = new URL("../../", import.meta.url);

/** Runs `harnessx …args` (the built CLI); never throws: the exit code is in the outcome. */
export function harnessx(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<CliOutcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["dist/cli/main.js", ...args],
      { cwd: root, env, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
