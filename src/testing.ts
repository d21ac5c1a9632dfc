// harnessx/testing: fakes for tests and demos. The LLM provider is the only thing harnessx fakes.
export {
  ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedStep,
  textResponse,
  toolCallResponse,
} from "./providers/scripted.js";
