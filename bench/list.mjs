// Issue 8: what `runtime.list()` costs on Redis as the runs stored grow. The same queries, a page
// of 50 each, against 1,000 runs and against 100,000 runs stored (two prefixes of one Redis),
// measured alternately so that drift falls on both alike. Prints one JSON document to stdout.
//
//   npm run --silent bench:list            # builds first
//   node bench/list.mjs --large=100000 --small=1000 --samples=1000
//
// Redis: REDIS_URL when set, else a private redis-server on a free port (no persistence).
import { cpus, loadavg } from "node:os";
import { Redis } from "ioredis";
import { deletePrefix } from "./lib/redis.mjs";
import { option, round, summarize } from "./lib/stats.mjs";
import { redisServer, redisVersion } from "./runtime/redis-server.mjs";
import { storeWith } from "./runtime/stored-runs.mjs";

const SMALL = option("small", 1000);
const LARGE = option("large", 100_000);
const SAMPLES = option("samples", 1000);
const LIMIT = 50;
const TARGET_RATIO = 2;

const log = (line) => process.stderr.write(`[bench:list] ${line}\n`);

async function main() {
  const loadAtStart = loadavg()[0];
  const redis = await redisServer();
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  const stores = [];
  try {
    for (const runs of [SMALL, LARGE]) stores.push(await storeWith(redis.url, runs, { log }));
    const queries = {
      firstPage: () => ({}),
      middlePage: (store) => ({ cursor: store.middleCursor }),
      byStatus: () => ({ status: "completed" }),
      byAgent: () => ({ agent: "support" }),
      byAgentAndStatus: () => ({ agent: "billing", status: "failed" }),
      bySession: (store) => ({ sessionId: store.sessionId }),
    };
    const results = {};
    for (const [name, build] of Object.entries(queries)) {
      const timings = stores.map(() => []);
      for (let sample = 0; sample < SAMPLES + 20; sample += 1) {
        for (const [at, store] of stores.entries()) {
          const options = { limit: LIMIT, ...build(store) };
          const began = performance.now();
          const page = await store.runtime.list(options);
          const elapsed = performance.now() - began;
          if (page.runs.length === 0) throw new Error(`${name}: an empty page`);
          if (sample >= 20) timings[at].push(elapsed); // the first 20 warm up
        }
      }
      const [small, large] = timings.map(summarize);
      results[name] = {
        [`runs${SMALL}`]: small,
        [`runs${LARGE}`]: large,
        p50Ratio: round(large.p50 / small.p50),
        p99Ratio: round(large.p99 / small.p99),
      };
      log(`${name}: p50 ${small.p50} → ${large.p50} ms, p99 ${small.p99} → ${large.p99} ms`);
    }
    const worst = Math.max(...Object.values(results).map((each) => each.p50Ratio));
    const worstP99 = Math.max(...Object.values(results).map((each) => each.p99Ratio));
    const output = {
      benchmark: "list",
      node: process.version,
      redis: await redisVersion(client),
      cpus: cpus().length,
      loadAverage1m: { atStart: round(loadAtStart), atEnd: round(loadavg()[0]) },
      pageSize: LIMIT,
      samples: SAMPLES,
      stored: Object.fromEntries(
        stores.map((store) => [
          `runs${store.runs}`,
          { writeSeconds: store.writeSeconds, runsPerSecond: store.runsPerSecond },
        ]),
      ),
      queries: results,
      target: { largeOverSmallAtMost: TARGET_RATIO },
      worstP50Ratio: worst,
      worstP99Ratio: worstP99,
      met: worst <= TARGET_RATIO && worstP99 <= TARGET_RATIO,
    };
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
  } finally {
    for (const store of stores) {
      await store.runtime.close({ timeoutMs: 1000 });
      await deletePrefix(client, store.prefix);
    }
    client.disconnect();
    await redis.stop();
  }
}

await main();
