// The fixture programs the tests start as processes of their own, bundled once per test run
// (global-setup.ts) from the current sources. Started through tsx, each such process first
// resolved and compiled some 230 modules of src/ through tsx's loader: about 2 s of a loaded
// 2-core host's time for every worker the reliability tests start and kill, against about 1 s
// for the bundle. The bundle is what tsx would run: the same sources, packages left to
// node_modules as the package's own bundle leaves them (scripts/bundle.mjs).
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { BUNDLED_FIXTURES, FIXTURE_BUNDLES_VARIABLE } from "./fixture-command.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Bundles the fixture programs into a folder of this run and names it in the environment the
 * test workers inherit; `remove` deletes the folder.
 */
export async function bundleFixtures(): Promise<{ remove: () => Promise<void> }> {
  // Two folders below the root, as src/'s modules are: the paths they resolve against
  // `import.meta.url` ("../../package.json") reach the same files, and packages resolve from
  // the root's node_modules. One folder per run: runs of one worktree may overlap.
  const dir = join(ROOT, "node_modules", `.harnessx-test-fixtures-${process.pid}`);
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await build({
      entryPoints: Object.fromEntries(
        BUNDLED_FIXTURES.map((name) => [name, join(ROOT, "test", "fixtures", `${name}.ts`)]),
      ),
      outdir: dir,
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node20",
      packages: "external",
      logLevel: "warning",
    });
  } catch (error) {
    await remove();
    throw error;
  }
  process.env[FIXTURE_BUNDLES_VARIABLE] = dir;
  return { remove };
}
