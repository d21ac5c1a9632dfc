import type {
  CallToolResult,
  CompatibilityCallToolResult,
} from "@modelcontextprotocol/sdk/types.js";

type ContentBlock = CallToolResult["content"][number];

/** What an MCP tool call gave: its text for the model, and whether the server flagged an error. */
export interface McpCallOutcome {
  text: string;
  isError: boolean;
}

/**
 * An MCP tool result as tool-result text: text blocks joined by newlines, every other block
 * summarised in brackets (binary data never reaches the model as base64).
 */
export function mcpResultText(result: CompatibilityCallToolResult): McpCallOutcome {
  if (!("content" in result) || !Array.isArray(result.content)) {
    // Servers on the 2024-10-07 protocol answer with `toolResult`.
    return { text: stringify(result.toolResult), isError: false };
  }
  const content = result.content as ContentBlock[];
  const text =
    content.length === 0 && result.structuredContent !== undefined
      ? stringify(result.structuredContent)
      : content.map(describeBlock).join("\n");
  return { text, isError: result.isError === true };
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case "resource_link":
      return `[resource link ${block.uri}${block.name ? ` (${block.name})` : ""}]`;
    case "resource": {
      const { resource } = block;
      const kind = resource.mimeType ? `, ${resource.mimeType}` : "";
      return "text" in resource && typeof resource.text === "string"
        ? `[resource ${resource.uri}${kind}]\n${resource.text}`
        : `[resource ${resource.uri}${kind}, ${base64Bytes("blob" in resource ? resource.blob : "")} bytes]`;
    }
    default:
      return `[${String((block as { type?: unknown }).type)} content]`;
  }
}

const base64Bytes = (data: string): number => {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
};

const stringify = (value: unknown): string =>
  typeof value === "string" ? value : (JSON.stringify(value) ?? "");
