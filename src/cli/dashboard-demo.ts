import type { Provider } from "../core/provider.js";
import { AgentRuntime } from "../runtime/agent-runtime.js";
import { memoryBackend } from "../runtime/memory-backend.js";
import { supportAgent } from "../testing/support-agent.js";
import { progress, stderrLogger } from "./cli-support.js";
import { type DashboardFlags, serveDashboard } from "./dashboard-commands.js";

/** Runs the demo leaves waiting for a person: refunds, which the support agent asks about. */
const WAITING = 3;
const ANSWERED = 9;

/**
 * `harnessx demo --dashboard`: the embedded runtime with a few finished runs and a few parked for
 * a person, and the dashboard over it on a local port until Ctrl-C. Nothing outside the process.
 */
export async function runDashboardDemo(
  flags: DashboardFlags & { provider?: Provider },
): Promise<void> {
  const logger = stderrLogger("harnessx-demo", "warn");
  const runtime = new AgentRuntime({
    agents: [
      supportAgent({
        logger,
        ...(flags.provider === undefined ? {} : { provider: flags.provider }),
      }),
    ],
    backend: memoryBackend(),
    logger,
  });
  await runtime.start();
  try {
    const questions = [
      ...Array.from({ length: ANSWERED }, (_, index) => `Where is order ${1000 + index}?`),
      ...Array.from({ length: WAITING }, (_, index) => `Refund order ${2000 + index}`),
    ];
    const handles = await runtime.submitMany("support", questions);
    const results = await Promise.all(handles.map((handle) => handle.result()));
    const waiting = results.filter((result) => result.status === "awaiting_approval").length;
    progress(`${results.length} runs: ${waiting} wait for a person in the approvals inbox`);
    await serveDashboard(runtime, flags, { runs: results.length, waiting });
  } finally {
    await runtime.close({ timeoutMs: 5_000 });
  }
}
