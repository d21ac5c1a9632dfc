import { execFile } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messageItem, responsesReply } from "../support/sdk-fixtures.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const CANARY_KEY = "sk-canary-cli-5d1e9a7b3c2f4e6d8a0b";

/** The environment without either API key, plus `extra`. */
function envWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { OPENAI_API_KEY: _openai, ANTHROPIC_API_KEY: _anthropic, ...rest } = process.env;
  return { ...rest, ...extra };
}

// The built CLI (npm test builds first), as the other CLI tests run it: through tsx, each run
// first compiled the CLI's modules, a second and more of a loaded host's time.
const cli = (args: readonly string[], env: NodeJS.ProcessEnv) =>
  run(process.execPath, ["dist/cli/main.js", ...args], {
    cwd: root,
    env,
    timeout: 30_000,
  });

async function failure(args: readonly string[], env: NodeJS.ProcessEnv) {
  return cli(args, env).then(
    () => ({ code: 0, stderr: "" }),
    (error: { code: number; stderr: string }) => error,
  );
}

describe("harnessx --provider", () => {
  it.each([
    { args: ["tour", "--provider", "openai"], message: "--provider openai needs OPENAI_API_KEY" },
    {
      args: ["demo", "--provider", "anthropic"],
      message: "--provider anthropic needs ANTHROPIC_API_KEY",
    },
    {
      args: ["tour", "--provider", "gemini"],
      message: '--provider must be openai or anthropic, got "gemini"',
    },
    { args: ["tour", "--model", "gpt-5"], message: "--model needs --provider openai|anthropic" },
  ])("refuses $args with exit code 2: $message", async ({ args, message }) => {
    const result = await failure(args, envWith({}));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`harnessx: ${message}`);
  });

  describe("with a key, against a local server speaking the Responses API", () => {
    let server: Server;
    const bodies: Array<{ model: string; stream?: boolean }> = [];
    const answer = responsesReply([messageItem("Answered by the fake server.")], {
      input: 10,
      cached: 0,
      output: 5,
    });

    const read = async (request: IncomingMessage): Promise<string> => {
      let text = "";
      for await (const chunk of request) text += String(chunk);
      return text;
    };

    beforeAll(async () => {
      server = createServer((request, response) => {
        void read(request).then((text) => {
          const body = JSON.parse(text) as { model: string; stream?: boolean };
          bodies.push(body);
          if (body.stream === true) {
            response.writeHead(200, { "content-type": "text/event-stream" });
            const events = [
              {
                type: "response.output_text.delta",
                output_index: 0,
                content_index: 0,
                item_id: "msg_recorded",
                delta: "Answered by the fake server.",
              },
              { type: "response.output_item.done", output_index: 0, item: answer.output[0] },
              { type: "response.completed", response: answer },
            ];
            response.end(
              events
                .map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)
                .join(""),
            );
          } else {
            response.writeHead(200, { "content-type": "application/json" });
            response.end(JSON.stringify(answer));
          }
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it("runs the tour on the real adapter and SDK, and prints no key", async () => {
      const { port } = server.address() as AddressInfo;
      const { stdout, stderr } = await cli(
        ["tour", "--provider", "openai", "--model", "gpt-5-nano"],
        envWith({ OPENAI_API_KEY: CANARY_KEY, OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` }),
      );
      const lines = stdout.split("\n");
      expect(lines[0]).toBe(
        'harnessx demo: direct runs with the model of provider "openai" (no Redis)',
      );
      expect(lines).toContain(
        '  result: completed after 1 model call(s): "Answered by the fake server."',
      );
      expect(lines).toContain('  text_delta "Answered by the fake server."');
      expect(bodies.map((body) => [body.model, body.stream === true])).toEqual([
        ["gpt-5-nano", false],
        ["gpt-5-nano", true],
        ["gpt-5-nano", false],
      ]);
      expect(stdout + stderr).not.toContain(CANARY_KEY);
    });
  });
});
