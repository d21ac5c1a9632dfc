import { importOptional, type LazyPackage } from "../core/optional-dependency.js";

/**
 * mcpTools' SDK, and ajv which validates tool input against the servers' JSON schemas: optional
 * peer dependencies (the SDK depends on ajv too), loaded when the first server is connected.
 */
export const MCP_SDK: LazyPackage = {
  feature: "mcpTools",
  packages: [
    { name: "@modelcontextprotocol/sdk", range: "^1.32.2" },
    { name: "ajv", range: "^8.20.0" },
    { name: "ajv-formats", range: "^3.0.1" },
  ],
};

/** The module that connects to MCP servers (it imports the SDK); `DependencyMissingError` without it. */
export const loadMcpConnection = () => importOptional(MCP_SDK, () => import("./mcp-connection.js"));
