import { describe, expect, it } from "vitest";
import { mcpResultText } from "../../../src/providers/mcp-content.js";

describe("mcpResultText", () => {
  it("joins text blocks with newlines", () => {
    expect(
      mcpResultText({
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second" },
        ],
      }),
    ).toEqual({ text: "first\nsecond", isError: false });
  });

  it("summarises binary blocks by type, MIME type and size, never as base64", () => {
    const data = Buffer.from("12345").toString("base64"); // "MTIzNDU=": 5 bytes
    const { text } = mcpResultText({
      content: [
        { type: "text", text: "Here:" },
        { type: "image", data, mimeType: "image/png" },
        { type: "audio", data: Buffer.from("1234").toString("base64"), mimeType: "audio/wav" },
        {
          type: "resource",
          resource: { uri: "file:///a.bin", blob: data, mimeType: "application/octet-stream" },
        },
      ],
    });
    expect(text).toBe(
      [
        "Here:",
        "[image image/png, 5 bytes]",
        "[audio audio/wav, 4 bytes]",
        "[resource file:///a.bin, application/octet-stream, 5 bytes]",
      ].join("\n"),
    );
    expect(text).not.toContain(data);
  });

  it("names resource links and includes the text of embedded text resources", () => {
    const { text } = mcpResultText({
      content: [
        { type: "resource_link", uri: "memo://1", name: "Memo 1" },
        { type: "resource", resource: { uri: "memo://2", mimeType: "text/plain", text: "body" } },
      ],
    });
    expect(text).toBe("[resource link memo://1 (Memo 1)]\n[resource memo://2, text/plain]\nbody");
  });

  it("uses structured content when there are no content blocks", () => {
    expect(mcpResultText({ content: [], structuredContent: { sum: 3 } })).toEqual({
      text: '{"sum":3}',
      isError: false,
    });
  });

  it("reports isError", () => {
    expect(mcpResultText({ content: [{ type: "text", text: "boom" }], isError: true })).toEqual({
      text: "boom",
      isError: true,
    });
  });

  it("reads the older protocol's toolResult", () => {
    expect(mcpResultText({ toolResult: { ok: true } })).toEqual({
      text: '{"ok":true}',
      isError: false,
    });
    expect(mcpResultText({ toolResult: "plain" }).text).toBe("plain");
  });
});
