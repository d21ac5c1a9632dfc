// Version 2: a run record is stored in two parts, so that storage grows with the conversation and not with
// its square: the conversation as an append-only list of messages (each written once), and the
// rest of the record as one small document in which every copy of the conversation (the
// input's, the machine context's, the result's) is left out and restored from the list on load.
//
// The layout of every version, oldest first; encode.ts writes the current one, and decode.ts
// reads each with its own decoder (decode-v3.ts, decode-v4.ts, call-refs.ts).
//
// Since schemaVersion 3 the document also leaves out what loading can derive again: a parked or
// finished run's `result` when it is the one its snapshot gives (`toRunResult`; the document
// then has no `result` key), and the run and session ids its machine context repeats (the
// document then says `sharedIds: true`). A version-2 document has neither and loads as it is.
// A backend that stores the run's summary beside the document (Redis) also leaves out what the
// summary holds (`fromSummary: true`): the run's ids, agent, status, phase and times, and the
// snapshot's state value, usage and iteration when they are the summary's phase, usage and
// iterations; loading takes them from the summary.
//
// Since schemaVersion 4 the document also leaves out the values loading can fill in again
// (see `compactSnapshot`): the snapshot's and its context's fields that hold their initial
// value, the context's `maxIterations` when it is the input's, a string input's text (the
// document says `text: true`: it is its one message's), and, beside a summary, each parked
// call that the summary's pending list holds (the document keeps `pending: <its index>` in
// place of its call, its status "asked" and its reason). A call's SHA-256 input hash is kept
// in base64url (`ih`) rather than hex.
//
// Since schemaVersion 5 the document also leaves out what the conversation holds of the calls:
// a call state whose call ({id, name, input}, nothing else) is exactly the tool_use block at
// index k of the conversation's last message (an assistant's; the record then holds exactly
// the messages its context counts, so that the store's message list ends with it) keeps
// `m: k` in place of its call, and leaves out its status when it is "allowed" and its reason
// when it is the permission policy's default allow (call-refs.ts); a reference to no tool_use
// block is refused as corrupt. A call its summary's pending list holds is kept by that
// (`pending`) first. And a null result is left out where loading derives none (a run neither
// parked nor finished: `derivedResult` gives null).

/** The document's top-level fields a summary holds. */
export const SUMMARY_FIELDS = [
  "runId",
  "sessionId",
  "agent",
  "status",
  "phase",
  "createdAt",
  "updatedAt",
] as const;

/** What a version-4 document leaves out of a snapshot when it holds these values. */
export const SNAPSHOT_DEFAULTS: Readonly<Record<string, unknown>> = {
  status: "active",
  historyValue: {},
  children: {},
};

/** True for a plain object (made by JSON.parse or a literal). */
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.getPrototypeOf(value) === Object.prototype;
