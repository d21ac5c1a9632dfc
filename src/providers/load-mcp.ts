import { importOptional, type LazyPackage } from "../core/optional-dependency.js";

/** mcpTools' SDK: an optional peer dependency, loaded when the first server is connected. */
export const MCP_SDK: LazyPackage = {
  feature: "mcpTools",
  packages: [{ name: "@modelcontextprotocol/sdk", range: "^1.32.2" }],
};

/** The module that connects to MCP servers (it imports the SDK); `DependencyMissingError` without it. */
export const loadMcpConnection = () => importOptional(MCP_SDK, () => import("./mcp-connection.js"));
