// How saved state and recordings are stored: anything that does not read back as written is
// refused with a BackendError, never misread.
import { describe, expect, it } from "vitest";
import { BackendError, type RecorderEntry } from "../../../src/index.js";
import {
  decodeStateValue,
  EXTENSION_STATE_VERSION,
  encodeStateValue,
} from "../../../src/store/extension-state-codec.js";
import { decodeRecording, RecordingWriter } from "../../../src/store/recording-codec.js";
import { thrown } from "../../support/thrown.js";

const message = (text: string) => ({
  role: "user" as const,
  content: [{ type: "text" as const, text }],
});
const request = (iteration: number, texts: string[]): RecorderEntry => ({
  type: "llm_request",
  runId: "r",
  iteration,
  at: iteration,
  request: {
    system: "",
    messages: texts.map(message),
    tools: [],
    model: "m",
    maxTokens: 1,
    temperature: 0,
    stream: false,
    prefixKey: null,
  },
});

/** What a writer stores for `entries`, in order. */
function store(entries: RecorderEntry[]): string[] {
  const writer = new RecordingWriter();
  const stored: string[] = [];
  for (const entry of entries) {
    const encoded = writer.encode("r", entry);
    encoded.stored(stored.push(encoded.json) - 1);
  }
  return stored;
}

describe("stored saved state", () => {
  it("round-trips JSON data and refuses another version or a bad document", () => {
    expect(decodeStateValue(encodeStateValue({ a: [1, "x"] }), "k")).toEqual({ a: [1, "x"] });
    const other = JSON.stringify({ version: EXTENSION_STATE_VERSION + 1, value: 1 });
    for (const bad of [other, "{", JSON.stringify({ value: 1 })]) {
      const error = thrown(() => decodeStateValue(bad, "hx:xstate:k"));
      expect(error).toBeInstanceOf(BackendError);
      expect((error as Error).message).toContain("hx:xstate:k");
    }
  });
});

describe("stored recordings", () => {
  it("stores a request's messages from where they differ, and reads them back whole", () => {
    const entries = [request(1, ["a"]), request(2, ["a", "b"]), request(3, ["a", "b", "c"])];
    const stored = store(entries);
    expect(JSON.parse(stored[2] as string)).toMatchObject({
      base: { entry: 1, messages: 2 },
      request: { messages: [message("c")] },
    });
    expect(decodeRecording("r", stored)).toEqual(entries);
  });

  it("refuses an entry that is not JSON, not an entry, or refers to what is not stored", () => {
    const [first, second] = store([request(1, ["a"]), request(2, ["a", "b"])]);
    const pointsPast = JSON.stringify({
      ...JSON.parse(second as string),
      base: { entry: 0, messages: 5 },
    });
    for (const bad of [["{"], [JSON.stringify({ type: "nope" })], [second], [first, pointsPast]]) {
      const error = thrown(() => decodeRecording("r", bad as string[]));
      expect(error).toBeInstanceOf(BackendError);
      expect((error as Error).message).toMatch(/of the recording of run "r"/);
    }
  });
});
