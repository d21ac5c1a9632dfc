import { ToolDefinitionError } from "../core/errors.js";
import { Registration } from "../core/registration.js";
import type { ToolCall, ToolResult, ToolSchema } from "../core/values.js";
import { invalidInputResult, runHandler, unknownToolResult } from "./run-handler.js";
import type { Tool, ToolContext } from "./tool.js";
import { validateInput } from "./validate.js";

type AnyTool = Tool<unknown>;

/** Tools by name. */
export class ToolRegistry {
  readonly #tools = new Map<string, AnyTool>();
  #schemas: ToolSchema[] | undefined;

  constructor(tools: readonly AnyTool[] = []) {
    for (const each of tools) this.register(each);
  }

  /** Adds a tool; a second tool of the same name is refused. */
  register(tool: AnyTool): Registration {
    if (this.#tools.has(tool.name)) {
      throw new ToolDefinitionError(`A tool named "${tool.name}" is already registered.`);
    }
    this.#tools.set(tool.name, tool);
    this.#schemas = undefined;
    return new Registration(() => {
      if (this.#tools.get(tool.name) === tool) {
        this.#tools.delete(tool.name);
        this.#schemas = undefined;
      }
    });
  }

  get(name: string): AnyTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  get size(): number {
    return this.#tools.size;
  }

  /** Canonical schemas in registration order. The same array is returned until the set changes. */
  schemas(): ToolSchema[] {
    this.#schemas ??= [...this.#tools.values()].map((each) => ({
      name: each.name,
      description: each.description,
      inputSchema: each.inputSchema,
    }));
    return this.#schemas;
  }

  /**
   * Runs a handler directly. This does NOT run middleware or permissions (only the agent
   * engine does): it validates the input and turns a throw into an error result.
   */
  async execute(call: ToolCall, context: Partial<ToolContext> = {}): Promise<ToolResult> {
    const found = this.#tools.get(call.name);
    if (found === undefined) return unknownToolResult(call);
    const input = validateInput(found.input, call.input);
    if (!input.ok) return invalidInputResult(call, input.message);
    const { result } = await runHandler(found, input.value, {
      signal: context.signal ?? new AbortController().signal,
      runId: context.runId ?? "direct",
      toolCallId: call.id,
      ...(context.sandbox === undefined ? {} : { sandbox: context.sandbox }),
    });
    return result;
  }
}
