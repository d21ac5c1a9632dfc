import type { Router } from "express";
import type { BackendQueue } from "../runtime/agent-runtime.js";
import { loadBullBoard } from "./load-bull-board.js";

const ROLE: Record<BackendQueue["role"], { label: string; about: string }> = {
  steps: {
    label: "run steps",
    about: "Each job advances one run of the named agent to its next effect boundary.",
  },
  tools: {
    label: "tool calls",
    about: "Each job runs one permitted tool call (agent, tool and call id in its name).",
  },
};

const OUTCOMES =
  "A job's colour says whether the job ran, not how its run ended: run outcomes live in the runs view. Each job's return value says where its run stands after it.";

/**
 * The link from a job to its run's page in the dashboard: every step and tool job's data names
 * its run. An absolute path, so bull-board's own `<base href>` does not move it.
 */
export function runLink(basePath: string, data: unknown): { displayText: string; href: string } {
  const runId = (data as { runId?: unknown } | null)?.runId;
  if (typeof runId !== "string" || runId === "") {
    return { displayText: "no run", href: `${basePath}/#runs` };
  }
  return {
    displayText: `run ${runId.slice(0, 8)}`,
    href: `${basePath}/#run/${encodeURIComponent(runId)}`,
  };
}

/**
 * bull-board over the runtime's BullMQ queues at `<basePath>/admin/queues`. Loaded only when a
 * Redis backend has queues: bull-board and its UI are never loaded for the memory backend.
 */
export async function queuesRouter(options: {
  queues: readonly BackendQueue[];
  basePath: string;
  readOnly: boolean;
}): Promise<Router> {
  const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await loadBullBoard();
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(`${options.basePath}/admin/queues`);
  createBullBoard({
    queues: options.queues.map(
      ({ role, prefix, queue }) =>
        new BullMQAdapter(queue, {
          readOnlyMode: options.readOnly,
          allowRetries: !options.readOnly,
          // Shown before the queue's name, and part of its key on the board: two prefixes never meet.
          prefix: `${prefix} / `,
          displayName: `harnessx ${prefix}: ${ROLE[role].label}`,
          description: `${ROLE[role].about} ${OUTCOMES}`,
          externalJobUrl: (job) => runLink(options.basePath, job.data),
        }),
    ),
    // @bull-board/express 9.10.1 pins its own copy of @bull-board/api: the same shape, another
    // declaration (align the two versions in package.json to drop this cast).
    serverAdapter: serverAdapter as unknown as Parameters<
      typeof createBullBoard
    >[0]["serverAdapter"],
    options: {
      uiConfig: {
        boardTitle: "harnessx queues",
        miscLinks: [{ text: "Runs and approvals", url: `${options.basePath}/` }],
      },
    },
  });
  return serverAdapter.getRouter() as Router;
}
