import type { Provider } from "../core/provider.js";
import { AgentRuntime } from "../runtime/agent-runtime.js";
import { memoryBackend } from "../runtime/memory-backend.js";
import { supportAgent } from "../testing/support-agent.js";
import { stderrLogger } from "./cli-support.js";
import type { DemoOutput } from "./demo.js";

export interface RuntimeDemoOptions {
  /** @defaultValue console.log */
  output?: DemoOutput;
  /** @defaultValue 36, or 3 with a real provider */
  runs?: number;
  /** A real model for the support agent. @defaultValue the scripted support model */
  provider?: Provider;
}

/** How the demo went, for `--json`. */
export interface RuntimeDemoSummary {
  runs: number;
  completed: number;
  seconds: number;
}

const short = (runId: string) => runId.slice(0, 8);

/**
 * The main job: many concurrent durable runs on the embedded (in-memory) runtime, one of them
 * parked for a person's approval and approved, printed as they progress.
 */
export async function runRuntimeDemo(
  options: RuntimeDemoOptions = {},
): Promise<RuntimeDemoSummary> {
  const print = options.output ?? ((line: string) => console.log(line));
  const total = options.runs ?? (options.provider === undefined ? 36 : 3);
  const logger = stderrLogger("harnessx-demo", "warn");
  const runtime = new AgentRuntime({
    agents: [
      supportAgent({
        logger,
        ...(options.provider === undefined ? {} : { provider: options.provider }),
      }),
    ],
    backend: memoryBackend(),
    logger,
  });
  await runtime.start();
  const started = Date.now();
  print(`harnessx embedded runtime: ${total} concurrent runs of agent "support", no servers`);

  try {
    const refundAt = Math.floor(total / 2);
    const handles = await Promise.all(
      Array.from({ length: total }, (_, index) =>
        runtime.submit(
          "support",
          index === refundAt ? `Refund order ${1000 + index}` : `Where is order ${1000 + index}?`,
        ),
      ),
    );
    print(`submitted ${handles.length} runs`);

    let finished = 0;
    const outcomes = await Promise.all(
      handles.map(async (handle) => {
        let result = await handle.result();
        if (result.status === "awaiting_approval") {
          for (const pending of result.pending) {
            print(
              `  run ${short(handle.runId)} waits for approval: ${pending.name}(${JSON.stringify(pending.input)}) — ${pending.reason}`,
            );
            print(`  approving ${pending.toolCallId} as "demo-operator"`);
            await runtime.approve(handle.runId, pending.toolCallId, { by: "demo-operator" });
          }
          result = await handle.result();
        }
        finished += 1;
        if (finished % 6 === 0 || finished === total || result.status !== "completed") {
          print(
            `[${finished}/${total}] run ${short(handle.runId)} ${result.status}: ${result.output ?? result.error?.message ?? ""}`,
          );
        }
        return result;
      }),
    );

    const completed = outcomes.filter((result) => result.status === "completed").length;
    const seconds = (Date.now() - started) / 1000;
    print(
      `${completed}/${total} runs completed in ${seconds.toFixed(2)} s (${(total / seconds).toFixed(0)} runs/s), one approved by a person`,
    );
    const listed = await runtime.list({ status: "completed" });
    print(`runtime.list({ status: "completed" }) → ${listed.runs.length} runs`);
    if (completed !== total) throw new Error(`${total - completed} run(s) did not complete`);
    return { runs: total, completed, seconds };
  } finally {
    await runtime.close({ timeoutMs: 5_000 });
  }
}
