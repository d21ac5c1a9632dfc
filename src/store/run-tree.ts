import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.js";
import type { ToolResult } from "../core/values.js";
import type { RunEvent } from "../engine/run-events.js";
import type { RunRecord } from "./schemas.js";

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
 *
 * The children a parent waits for are counted per parent: each is running, finished, or not
 * counted (released, or never linked). A finished child stays finished until the parent's next
 * turn (`waitForChildren`): linking it again does not count it again. A child is linked before
 * its run is stored, and a link whose child is never stored goes (released, replaced by the
 * next turn, or with its parent's deletion): readers list the children whose run is stored.
 */
export interface RunTree {
  /**
   * The children of the turn a parent enters `dispatch` with, recorded before any of them can
   * start (SPEC §14, "the last child to finish enqueues the parent's next step"): each link is
   * recorded as `linkChild` records it, and these children become exactly the ones the parent
   * waits for. What was counted before and is not among them (a turn a crash cut short before
   * its dispatch save, whose children nothing starts) stops counting, and leaves the tree (link
   * and places) unless a run of it is stored, as a release does. Fenced by the
   * parent's lease `token` as a save is: refused with `LeaseLostError` when a newer token was
   * issued. One atomic write (Redis: one script on keys under the prefix, so one slot of a
   * Cluster when the prefix is in braces). Applied before any write of the parent issued after
   * it is called, without waiting for its reply: a save (fenced by the same token, so refused
   * when this is), or a child's finish (`childFinished`).
   */
  waitForChildren(parentRunId: string, token: number, links: readonly RunLink[]): Promise<void>;
  /**
   * Records `link` under its parent and its root (a link recorded before is left as it is:
   * false), and counts the child as running under its parent unless it is counted already or
   * finished.
   */
  linkChild(link: RunLink): Promise<boolean>;
  /**
   * The link of `runId`; none for a root or an unknown run. `saved`: the record this process
   * has just saved finished, for a backend that read the link with that save (Redis).
   */
  linkOf(runId: string, saved?: RunRecord): Promise<RunLink | undefined>;
  /**
   * The children of `parentRunId`, oldest first: those linked under it, released ones whose
   * run is stored included, as under their root (`descendantsOf`).
   */
  childrenOf(parentRunId: string): Promise<RunLink[]>;
  /** Every run below `rootRunId`, at any depth, oldest first. */
  descendantsOf(rootRunId: string): Promise<RunLink[]>;
  /**
   * The child of `link` finished: it no longer counts as running under its parent. True when no
   * child of the parent runs any more, which tells the caller to wake the parent. Asked again
   * (a job delivered again), it answers the same while no child was linked since: one change
   * is atomic, so two children finishing at once see one "true" between them.
   *
   * With `outcome`, the child's result is first committed to its parent's call, as
   * `CallLedger.commitRaw(parentRunId, parentIteration, result, events)` commits it (first
   * write wins; the events are appended either way), in the same atomic write as the count
   * (Redis: one script on the parent's keys), so that a job queued after this sees both.
   */
  childFinished(link: RunLink, outcome?: ChildOutcome): Promise<boolean>;
  /**
   * The call of `link` did not start its child (denied or asked at dispatch, refused): the child
   * no longer counts under its parent, and linking it again (after an approval) counts it again.
   * Never tells to wake the parent: the call's own result (or wait) steps it. A child whose run
   * is stored stays a child of its parent (listed, not counted). When no run of the child is
   * stored, its link and places go (nothing else would delete them), atomically with respect
   * to a start: a child run is stored only while its link is (`RunStore.createRun`), so a start
   * racing the release either stored the run first (the link stays) or stores nothing.
   */
  releaseChild(link: Pick<RunLink, "runId" | "parentRunId">): Promise<void>;
  /** The ids of the children of `parentRunId` still running. */
  runningChildren(parentRunId: string): Promise<string[]>;
}

/** What a finished child gives its parent's call (`RunTree.childFinished`). */
export interface ChildOutcome {
  result: ToolResult;
  /** Events for the parent's log (its `child_finished`). */
  events?: readonly RunEvent[];
}

/** Links oldest first: by creation, then by run id (stored sets keep no order of their own). */
export const oldestFirst = (a: RunLink, b: RunLink): number =>
  a.createdAt - b.createdAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
