// A Sandbox runs code and shell commands under limits: a timeout that kills everything the
// program started, capped output, a work folder, and an environment without this process's
// variables; nothing the program starts outlives the call. Where bwrap is installed ("auto"),
// it also keeps the network out and the system read-only, with no capability even under root.
// `new Agent({ sandbox })` gives the model a `bash` tool that runs in it.
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Agent, HookEvent, HookRegistry, Sandbox } from "../src/index.js";
import { ScriptedProvider, textResponse, toolCallResponse } from "../src/testing.js";

const work = await mkdtemp(join(tmpdir(), "harnessx-example-"));

/** True while a process runs `program` with these arguments, seen from this host's /proc. */
function running(program: string, ...args: string[]): boolean {
  const wanted = [program, ...args].join("\0");
  return readdirSync("/proc").some((entry) => {
    try {
      const line = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0$/, "");
      return line === wanted && !/\) [ZX]/.test(readFileSync(`/proc/${entry}/stat`, "utf8"));
    } catch {
      return false; // not a process, or it ended while we looked
    }
  });
}
process.env.EXAMPLE_SECRET = "s3cr3t"; // set in this process; the sandbox never sees it

try {
  const hooks = new HookRegistry();
  hooks.on(HookEvent.SANDBOX_EXEC, ({ data }) => {
    console.log(`  SANDBOX_EXEC ${data.kind} exit=${data.exitCode} timedOut=${data.timedOut}`);
  });
  const sandbox = new Sandbox(
    { cwd: work, timeoutMs: 5_000, maxOutputBytes: 64, env: { GREETING: "hi" } },
    { hooks },
  );
  console.log(`tier: ${await sandbox.tier()}`);

  const javascript = await sandbox.execute("console.log(1 + 1)", { language: "javascript" });
  console.log(`javascript: ${javascript.stdout.trim()}`);
  const python = await sandbox.execute("print(sum(range(10)))", { language: "python" });
  console.log(`python: ${python.stdout.trim()}`);
  const bash = await sandbox.execute('echo "$GREETING from $(basename "$PWD" | cut -c1-16)"', {
    language: "bash",
  });
  console.log(`bash: ${bash.stdout.trim()}`);

  const secret = await sandbox.executeCommand(
    'echo "secret=$(printenv EXAMPLE_SECRET || echo unset)"; exit 3',
  );
  console.log(`command: ${secret.stdout.trim()} (exit code ${secret.exitCode})`);

  const long = await sandbox.executeCommand("seq 1 100000");
  console.log(`capped: ${long.stdout.split("\n").at(-1)}`);

  const quick = new Sandbox({ cwd: work, timeoutMs: 300 }, { hooks });
  const hung = await quick.executeCommand("sleep 30 & sleep 30");
  console.log(`timed out: ${hung.timedOut}, exit code ${hung.exitCode}`);

  // Nothing a command starts outlives the call: not even a daemon that left its session.
  const daemon = await sandbox.executeCommand(
    "setsid sleep 4321 </dev/null >/dev/null 2>&1 & echo started",
  );
  console.log(`daemon: ${daemon.stdout.trim()}, alive after the call: ${running("sleep", "4321")}`);

  // The agent's bash tool: the scripted model writes a file, then answers.
  const provider = new ScriptedProvider([
    toolCallResponse([
      { name: "bash", input: { command: "echo 42 > answer.txt && cat answer.txt" } },
    ]),
    textResponse("The answer is in answer.txt."),
  ]);
  const agent = new Agent({ provider, sandbox, logger: pino({ level: "silent" }) });
  const result = await agent.run("Write the answer to a file");
  const toolResult = result.messages
    .flatMap((message) => message.content)
    .find((block) => block.type === "tool_result");
  console.log(
    `bash tool: ${JSON.stringify(toolResult?.type === "tool_result" ? toolResult.content : null)}`,
  );
  console.log(`answer.txt: ${(await readFile(join(work, "answer.txt"), "utf8")).trim()}`);
  console.log(`agent: ${result.status}: ${result.output}`);
} finally {
  await rm(work, { recursive: true, force: true });
}
