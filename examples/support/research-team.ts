// The research-and-write team of examples/research-and-write.ts (also used by
// scripts/screenshots.mjs for the dashboard's run tree): a lead that asks a researcher agent
// (an agent used as a tool) about each topic, then hands the conversation to a writer whose
// answer must match a zod schema. Scripted models stand in for real ones, so everything runs
// offline; each one answers from the conversation it is sent, so any number of runs can
// share them.
import type { Logger } from "pino";
import { z } from "zod";
import {
  Agent,
  type ContentBlock,
  type Message,
  type ProviderRequest,
  type ProviderResponse,
} from "../../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../../src/testing.js";

/** The writer's structured answer. */
export const Article = z.object({ title: z.string(), body: z.string() });
export type Article = z.infer<typeof Article>;

/** Canned findings of the researcher's "model", by topic. */
const FINDINGS: Record<string, string> = {
  trams: "Line 28 has climbed the Alfama hills since 1914 in wooden Remodelado cars.",
  pastries: "Pastéis de nata come from the Jerónimos monastery; Belém still bakes them daily.",
  tiles: "Azulejos cover façades from the 16th century on; the museum is in Madre de Deus.",
};

const textOf = (message: Message | undefined): string =>
  (message?.content ?? []).map((block) => (block.type === "text" ? block.text : "")).join("");

/** The results of the lead's `research` calls in a conversation. */
const researchNotes = (messages: readonly Message[]): string[] =>
  messages
    .flatMap((message): readonly ContentBlock[] => message.content)
    .flatMap((block) =>
      block.type === "tool_result" && block.toolCallId.startsWith("research_")
        ? [block.content]
        : [],
    );

/**
 * A scripted model answering with `answer`, its usage counted as a real model's would be,
 * about four characters a token (so that the dashboard's token totals look like a real run's).
 */
const model = (answer: (request: ProviderRequest) => ProviderResponse) =>
  new ScriptedProvider(
    [
      (request) => {
        const response = answer(request);
        const tokens = (value: unknown) => Math.ceil(JSON.stringify(value).length / 4);
        const inputTokens = tokens([request.system, request.messages, request.tools]);
        const usage = { ...response.usage, inputTokens, outputTokens: tokens(response.content) };
        return { ...response, usage };
      },
    ],
    { loop: true },
  );

/** "Lisbon: trams, pastries" → the subject and its topics. */
export function parseBrief(brief: string): { subject: string; topics: string[] } {
  const [subject = brief, list = ""] = brief.split(":");
  const topics = list
    .split(",")
    .map((topic) => topic.trim())
    .filter((topic) => topic.length > 0);
  return { subject: subject.trim(), topics };
}

/** The researcher: notes on the topic it is asked about (its input's text). */
const researcherModel = () =>
  model((request) => {
    const asked = textOf(request.messages.at(-1));
    const topic = asked.split(" ").at(-1) ?? asked;
    return textResponse(FINDINGS[topic] ?? `Nothing found on ${asked}.`);
  });

/** The lead: one `research` call per topic in one turn, then the handoff to the writer. */
const leadModel = () =>
  model((request) => {
    const { subject, topics } = parseBrief(textOf(request.messages[0]));
    if (researchNotes(request.messages).length === 0) {
      return toolCallResponse(
        topics.map((topic, index) => ({
          name: "research",
          input: { input: `${subject} ${topic}` },
          id: `research_${index + 1}`,
        })),
      );
    }
    return toolCallResponse([{ name: "transfer_to_writer", input: {}, id: "handoff_1" }], {
      text: "The notes are in; the writer takes it from here.",
    });
  });

/**
 * The writer: its first answer has no body (the run sends it back with what failed), the
 * answer after that is the article, from the research notes in the conversation.
 */
const writerModel = () =>
  model((request) => {
    const { subject } = parseBrief(textOf(request.messages[0]));
    const title = `${subject}, briefly`;
    if (request.messages.at(-1)?.role !== "user") return textResponse(JSON.stringify({ title }));
    return textResponse(JSON.stringify({ title, body: researchNotes(request.messages).join(" ") }));
  });

/** The three agents, fresh: register all three on a runtime (it finds them by name). */
export function researchTeam(logger: Logger) {
  const researcher = new Agent({
    provider: researcherModel(),
    config: { name: "researcher", systemPrompt: "You research one topic and answer with notes." },
    logger,
  });
  const writer = new Agent({
    provider: writerModel(),
    config: { name: "writer", systemPrompt: "You write short articles.", output: Article },
    logger,
  });
  const lead = new Agent({
    provider: leadModel(),
    tools: [researcher.asTool({ name: "research", description: "Research one topic" })],
    handoffs: [writer],
    config: {
      name: "lead",
      systemPrompt: "Research each topic of the brief, then hand the writing to the writer.",
    },
    logger,
  });
  return { lead, researcher, writer };
}
