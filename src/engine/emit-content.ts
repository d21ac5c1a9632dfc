import type { ContentBlock } from "../core/values.js";
import type { RunEvent } from "./run-events.js";

/** Streams a finished response's text and thinking, one delta a block. */
export function emitContentAsDeltas(
  content: readonly ContentBlock[],
  emit: (event: RunEvent) => void,
): void {
  for (const block of content) {
    if (block.type === "text" && block.text !== "") emit({ type: "text_delta", text: block.text });
    else if (block.type === "thinking" && block.text !== "")
      emit({ type: "thinking_delta", text: block.text });
  }
}
