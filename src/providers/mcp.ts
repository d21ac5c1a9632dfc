import { loadMcpConnection } from "./load-mcp.js";
import { type McpTools, type McpToolsOptions, parseMcpOptions } from "./mcp-options.js";

export {
  type McpHttpOptions,
  McpServerError,
  type McpStdioOptions,
  type McpTools,
  type McpToolsOptions,
} from "./mcp-options.js";

/**
 * Connects to an MCP server and offers its tools as harnessx tools: their JSON schemas
 * validate the input, and calls go through middleware, permissions and durable commits like
 * any other tool's. A server that dies gives later calls error results, never a crash.
 * @example
 * const mcp = await mcpTools({ command: "node", args: ["server.js"] }); // or { url }
 * const agent = new Agent({ provider, tools: [...mcp.tools], mcp: [mcp] }); // closed with the agent
 */
export async function mcpTools(options: McpToolsOptions): Promise<McpTools> {
  const parsed = parseMcpOptions(options);
  // The MCP SDK is loaded here, not with the package: most agents never use it.
  const { connectMcp } = await loadMcpConnection();
  return connectMcp(parsed);
}
