import { memoryBackend } from "../../src/index.js";
import { describeBackendContract } from "./backend-contract.js";

describeBackendContract("memoryBackend()", {
  create: () => memoryBackend(),
  cleanup: async () => {},
});
