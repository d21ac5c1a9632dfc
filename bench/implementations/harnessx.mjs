// harnessx itself: an Agent with the shared workload, run directly (`agent.run`).

import { pino } from "pino";
import * as built from "../../dist/index.js";
import {
  createMiddleware,
  createProvider,
  forgetRequests,
  HOOK_EVENTS,
  noopTool,
  observeHook,
} from "../workload.mjs";

export const name = "harnessx";

/**
 * An agent whose every run makes `toolIterations` provider+tool iterations, then answers;
 * `options` adds Agent options (bench/recorder.mjs adds a recorder).
 */
export function create(toolIterations, options = {}) {
  return createWith(built, toolIterations, options);
}

/** The same with another build's `harnessx` module (`run-all.mjs --baseline`). */
export function createWith({ Agent, HookEvent }, toolIterations, options = {}) {
  const provider = createProvider(toolIterations);
  const agent = new Agent({
    provider,
    tools: [noopTool],
    middleware: createMiddleware(),
    logger: pino({ level: "silent" }),
    ...options,
  });
  for (const event of HOOK_EVENTS) agent.hooks.on(HookEvent[event], observeHook);
  return {
    async run() {
      const result = await agent.run("Run the benchmark.");
      forgetRequests(provider);
      return result;
    },
  };
}
