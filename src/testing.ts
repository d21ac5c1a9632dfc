// harnessx/testing: fakes for tests and demos. The LLM provider is the only thing harnessx fakes.

export {
  FakeFetch,
  type FakeFetchOptions,
  type FakeReply,
  type RecordedRequest,
} from "./providers/fake-fetch.js";
export {
  ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedStep,
  textResponse,
  toolCallResponse,
} from "./providers/scripted.js";
export {
  supportAgent as demoSupportAgent,
  supportModel as demoSupportModel,
} from "./testing/support-agent.js";
