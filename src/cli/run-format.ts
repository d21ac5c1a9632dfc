import type { ContentBlock, Usage } from "../core/values.js";
import type { RunDetail, RunSummary } from "../store/summary.js";

// The text a person reads of stored runs: a compact table of summaries and one run's timeline.

export const clip = (text: string, max = 70): string =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

/** One message's blocks on one line: texts quoted, tool calls as `name(input)`, results. */
export const describeContent = (content: readonly ContentBlock[]): string =>
  content
    .map((block) => {
      if (block.type === "tool_use") return `${block.name}(${JSON.stringify(block.input)})`;
      if (block.type === "tool_result") return `result ${JSON.stringify(clip(block.content))}`;
      return `${block.type === "thinking" ? "thinking " : ""}${JSON.stringify(clip(block.text))}`;
    })
    .join(" + ");

/** A time as UTC, to the second: `2025-01-31 12:00:00`. */
export const timeOf = (ms: number): string =>
  new Date(ms).toISOString().replace("T", " ").slice(0, 19);

const tokensOf = (usage: Usage): number => usage.inputTokens + usage.outputTokens;

/** Rows under a header, each column as wide as its widest cell, the last one left ragged. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0),
      )
      .join("  ");
  return [line(header), ...rows.map(line)];
}

/** `runs ls`: one row per run, newest first. */
export function runsTable(runs: readonly RunSummary[]): string[] {
  return table(
    ["RUN", "AGENT", "STATUS", "PHASE", "PENDING", "ITER", "TOKENS", "UPDATED"],
    runs.map((run) => [
      run.runId,
      run.agent,
      run.status,
      run.phase,
      String(run.pending.length),
      String(run.iterations),
      String(tokensOf(run.usage)),
      timeOf(run.updatedAt),
    ]),
  );
}

/** Messages shown of a long conversation: its first (the input) and its last ones. */
const CONVERSATION_TAIL = 12;

/** `runs show`: the summary, the calls waiting for a person, the decisions and the conversation. */
export function runTimeline(run: RunDetail): string[] {
  const { usage } = run;
  const lines = [
    `run       ${run.runId}`,
    `agent     ${run.agent}   session ${run.sessionId}`,
    `status    ${run.status} (phase ${run.phase})`,
    `created   ${timeOf(run.createdAt)}   updated ${timeOf(run.updatedAt)}`,
    `usage     ${run.iterations} model call(s), ${usage.inputTokens} in / ${usage.outputTokens} out tokens (cache read ${usage.cacheReadTokens}, write ${usage.cacheWriteTokens})`,
  ];
  if (run.error !== null) lines.push(`error     ${run.error.code}: ${run.error.message}`);
  if (run.cancelledBy !== undefined) lines.push(`cancelled by ${run.cancelledBy}`);
  lines.push("", `pending (${run.pending.length})`);
  for (const call of run.pending) {
    lines.push(
      `  ${call.toolCallId}  ${call.name}(${clip(JSON.stringify(call.input))})  ${call.reason}`,
    );
  }
  lines.push("", `decisions (${run.decisions.length})`);
  for (const decision of run.decisions) {
    const reason = decision.reason === null ? "" : `  ${JSON.stringify(decision.reason)}`;
    lines.push(
      `  ${timeOf(decision.at)}  ${decision.toolCallId} ${decision.name}: ${decision.decision} by ${decision.by ?? "(unknown)"}${reason}`,
    );
  }
  lines.push(...timelineLines(run));
  lines.push("", `conversation (${run.messages.length} messages)`);
  const shown = run.messages.map(
    (message, index) =>
      `  ${String(index + 1).padStart(3)} ${message.role.padEnd(9)} ${describeContent(message.content)}`,
  );
  if (shown.length > CONVERSATION_TAIL + 1) {
    const skipped = shown.length - CONVERSATION_TAIL - 1;
    lines.push(shown[0] ?? "", `      … ${skipped} more`, ...shown.slice(-CONVERSATION_TAIL));
  } else lines.push(...shown);
  return lines;
}

/** The run's model calls with their tokens, its tool calls raw and processed, and its saves. */
function timelineLines(run: RunDetail): string[] {
  const lines: string[] = [];
  const { modelCalls = [], toolCalls = [], checkpoints = [] } = run;
  lines.push("", `model calls (${modelCalls.length})`);
  for (const call of modelCalls) {
    const { usage } = call;
    lines.push(
      `  ${String(call.iteration).padStart(3)} ${timeOf(call.at)}  ${call.model}  ${usage.inputTokens} in / ${usage.outputTokens} out (cache read ${usage.cacheReadTokens}, write ${usage.cacheWriteTokens})  ${call.durationMs} ms  ${call.stopReason}`,
    );
  }
  lines.push("", `tool calls (${toolCalls.length})`);
  for (const call of toolCalls) {
    lines.push(
      `  ${String(call.iteration).padStart(3)} ${call.toolCallId} ${call.name}(${clip(JSON.stringify(call.input))})`,
    );
    const { raw, result } = call;
    if (result === null) lines.push("        (no result yet)");
    else if (raw === null || (raw.content === result.content && raw.isError === result.isError)) {
      lines.push(
        `        ${raw === null ? "result (no handler ran)" : "result"}: ${clip(JSON.stringify(result.content))}`,
      );
    } else {
      lines.push(
        `        raw:       ${clip(JSON.stringify(raw.content))}`,
        `        processed: ${clip(JSON.stringify(result.content))}`,
      );
    }
  }
  lines.push("", `checkpoints (${checkpoints.length})`);
  for (const checkpoint of checkpoints) {
    lines.push(
      `  ${timeOf(checkpoint.at)}  ${checkpoint.phase} (${checkpoint.status}, iteration ${checkpoint.iteration})`,
    );
  }
  return lines;
}
