import { systemTimer } from "../core/deadline.js";
import { ToolDefinitionError } from "../core/errors.js";
import { entryById, recordById } from "../core/id-record.js";
import { Registration } from "../core/registration.js";
import type { ToolCall, ToolResult, ToolSchema } from "../core/values.js";
import { runHandler, unknownToolResult } from "./run-handler.js";
import { type SecretInputs, secretPathsOf, withoutSecretMarks } from "./secret-inputs.js";
import { DEFAULT_TOOL_TIMEOUT_MS, type Tool, type ToolContext } from "./tool.js";

type AnyTool = Tool<unknown>;

/** Tools by name. */
export class ToolRegistry {
  readonly #tools = new Map<string, AnyTool>();
  #schemas: ToolSchema[] | undefined;
  #secrets: Record<string, string[][]> | undefined;

  constructor(tools: readonly AnyTool[] = []) {
    for (const each of tools) this.register(each);
  }

  /** Adds a tool; a second tool of the same name is refused. */
  register(tool: AnyTool): Registration {
    if (this.#tools.has(tool.name)) {
      throw new ToolDefinitionError(`A tool named "${tool.name}" is already registered.`);
    }
    this.#tools.set(tool.name, tool);
    this.#changed();
    return new Registration(() => {
      if (this.#tools.get(tool.name) === tool) {
        this.#tools.delete(tool.name);
        this.#changed();
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

  #changed(): void {
    this.#schemas = undefined;
    this.#secrets = undefined;
  }

  /**
   * Canonical schemas in registration order, without the marks of secret fields (providers
   * are not told). The same array is returned until the set changes.
   */
  schemas(): ToolSchema[] {
    this.#schemas ??= [...this.#tools.values()].map((each) => ({
      name: each.name,
      description: each.description,
      inputSchema: entryById(this.secretInputs(), each.name)
        ? withoutSecretMarks(each.inputSchema)
        : each.inputSchema,
    }));
    return this.#schemas;
  }

  /** The input fields each tool marks secret (`.meta({ secret: true })`), by tool name. */
  secretInputs(): SecretInputs {
    this.#secrets ??= recordById(
      [...this.#tools.values()].flatMap((each) => {
        const paths = secretPathsOf(each.inputSchema);
        return paths.length === 0 ? [] : [[each.name, paths] as const];
      }),
    );
    return this.#secrets;
  }

  /**
   * Runs a handler directly with `call.input` as it is. This does NOT run middleware,
   * validation or permissions (only the agent engine does); a throw becomes an error result, and
   * so does a handler past the tool's `timeoutMs` (default 300_000).
   */
  async execute(call: ToolCall, context: Partial<ToolContext> = {}): Promise<ToolResult> {
    const found = this.#tools.get(call.name);
    if (found === undefined) return unknownToolResult(call);
    const { result } = await runHandler(
      found,
      call.input,
      {
        // The call's own signal: the deadline's link to what the handler read goes with it.
        signal:
          context.signal === undefined
            ? new AbortController().signal
            : AbortSignal.any([context.signal]),
        runId: context.runId ?? "direct",
        toolCallId: call.id,
        ...(context.sandbox === undefined ? {} : { sandbox: context.sandbox }),
      },
      { timeoutMs: found.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS, timer: systemTimer },
    );
    return result;
  }
}
