import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";

/**
 * A child run's place in its tree (SPEC §14): who started it, from which call of which
 * iteration, and the tree's root. A run without a link is a root.
 */
export const RunLink = lazySchema(() =>
  z.object({
    runId: z.string().min(1),
    agent: z.string().min(1),
    parentRunId: z.string().min(1),
    parentToolCallId: z.string().min(1),
    /** The parent's iteration the call belongs to: the child's result is committed to it. */
    parentIteration: z.number().int().positive(),
    rootRunId: z.string().min(1),
    /** 1 for a child of a root, one more per level. */
    depth: z.number().int().positive(),
    createdAt: z.number(),
  }),
);
export type RunLink = z.infer<typeof RunLink>;

/**
 * The run tree's role (DESIGN.md "The run store, by role"): parent/child links, and the
 * children each waiting parent still waits for. Every write is idempotent, so that a job
 * delivered again after a crash can repeat it.
 */
export interface RunTree {
  /**
   * Records `link` under its parent and its root and counts the child as running under its
   * parent; a link recorded before is left as it is (false).
   */
  linkChild(link: RunLink): Promise<boolean>;
  /** The link of `runId`; none for a root or an unknown run. */
  linkOf(runId: string): Promise<RunLink | undefined>;
  /** The children of `parentRunId`, oldest first. */
  childrenOf(parentRunId: string): Promise<RunLink[]>;
  /** Every run below `rootRunId`, at any depth, oldest first. */
  descendantsOf(rootRunId: string): Promise<RunLink[]>;
  /**
   * The child of `link` finished: it no longer counts as running under its parent. True when no
   * child of the parent runs any more, which tells the caller to wake the parent. Asked again
   * (a job delivered again), it answers the same while no child was linked since: one removal
   * is atomic, so two children finishing at once see one "true" between them.
   */
  childFinished(link: RunLink): Promise<boolean>;
  /** The ids of the children of `parentRunId` still running. */
  runningChildren(parentRunId: string): Promise<string[]>;
}

/** Links oldest first: by creation, then by run id (stored sets keep no order of their own). */
export const oldestFirst = (a: RunLink, b: RunLink): number =>
  a.createdAt - b.createdAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
