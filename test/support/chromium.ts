// A headless Debian chromium driven by playwright-core, for the page tests (CI installs it).
import { type Browser, chromium } from "playwright-core";
import { afterAll, afterEach, beforeAll } from "vitest";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS, headless: true });
}

/**
 * A test file's Chromium, launched before its tests and closed after them, and `closers`: what
 * each test opened, closed after that test, newest first.
 */
export function useChromium(): {
  readonly browser: Browser;
  readonly closers: Array<() => Promise<unknown>>;
} {
  let browser: Browser | undefined;
  const closers: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  return {
    get browser() {
      if (browser === undefined) throw new Error("Chromium is launched before the file's tests");
      return browser;
    },
    closers,
  };
}
