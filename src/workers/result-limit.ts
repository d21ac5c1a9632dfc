// The cut lives with the tools (direct runs apply it too); the workers keep their import path.
export { capToolResult, DEFAULT_MAX_BYTES } from "../tools/result-limit.js";
