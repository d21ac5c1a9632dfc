// Skills: folders with a SKILL.md (front matter `name` and `description`, then instructions).
// `new Agent({ skills: { paths } })` lists every skill in the system prompt, adds the `skill`
// tool ({ name } → the instructions) and `skill_read` ({ name, path } → a file next to them,
// never one outside the skill's folder), and emits SKILL_INVOKED for each `skill` call.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, HookEvent } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const here = path.dirname(fileURLToPath(import.meta.url));

const provider = new ScriptedProvider([
  (request) => {
    console.log("skills in the system prompt:");
    for (const line of request.system.split("\n").filter((each) => each.startsWith("- "))) {
      console.log(`  ${line}`);
    }
    return toolCallResponse([{ name: "skill", input: { name: "release-notes" } }]);
  },
  toolCallResponse([
    { name: "skill_read", input: { name: "release-notes", path: "template.md" } },
    { name: "skill_read", input: { name: "release-notes", path: "../incident-summary/SKILL.md" } },
    { name: "skill", input: { name: "changelog" } },
  ]),
  textResponse("## v1.2.0 — 2026-12-03\n### Added\n- Skills"),
]);

const agent = new Agent({
  provider,
  config: { systemPrompt: "You help a release manager." },
  skills: { paths: [path.join(here, "skills")] },
});

agent.hooks.on(HookEvent.SKILL_INVOKED, ({ data }) => {
  const source = data.sourcePath === null ? "none" : path.relative(here, data.sourcePath);
  console.log(
    `SKILL_INVOKED ${data.skill}: found=${data.found} source=${source} bodyChars=${data.bodyChars}`,
  );
});
agent.hooks.afterTool(({ data }) => {
  const { toolCall, result } = data;
  const firstLine = result.content.split("\n")[0];
  console.log(
    `${toolCall.name}(${JSON.stringify(toolCall.input)}) -> ${result.isError ? "error: " : ""}${firstLine}`,
  );
});

const result = await agent.run("Write the release notes for 1.2.0.");
console.log(`run: ${result.status}`);
