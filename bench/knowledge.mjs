// Issue 12: knowledge_search over a generated corpus — index build time and search latency.
// Prints one JSON document to stdout; progress goes to stderr. Run with
// `npm run --silent bench:knowledge` (it builds first). See bench/README.md.
//
// Options: --docs N (5000) documents; --queries N (1000) timed searches; --repetitions N (3)
// index builds, each from a fresh agent; --seed N (12) for the generated text.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { Agent } from "../dist/index.js";
import { median, now, option, round, summarize } from "./lib/stats.mjs";

const log = (line) => process.stderr.write(`[bench:knowledge] ${line}\n`);
const DOCS = option("docs", 5000);
const QUERIES = option("queries", 1000);
const REPETITIONS = option("repetitions", 3);
const SEED = option("seed", 12);

/** mulberry32: a small seeded generator, so every run indexes the same corpus. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = random(SEED);
const pick = (items) => items[Math.floor(next() * items.length)];
const SYLLABLES = ["ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "qui", "ban", "est", "or"];
// About 5,300 distinct made-up words (12,000 draws, deduplicated); word i is drawn with weight
// 1/(i+1) (Zipf), as in real text.
const VOCABULARY = [
  ...new Set(
    Array.from({ length: 12_000 }, () =>
      Array.from({ length: 2 + Math.floor(next() * 3) }, () => pick(SYLLABLES)).join(""),
    ),
  ),
];
const cumulative = [];
VOCABULARY.reduce((sum, _, index) => {
  cumulative.push(sum + 1 / (index + 1));
  return sum + 1 / (index + 1);
}, 0);
const zipfWord = () => {
  const target = next() * cumulative[cumulative.length - 1];
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (cumulative[middle] < target) low = middle + 1;
    else high = middle;
  }
  return VOCABULARY[low];
};

function documentText(index) {
  const words = 150 + Math.floor(next() * 250);
  const title = `# ${zipfWord()} ${zipfWord()} ${index}`;
  const body = [];
  for (let at = 0; at < words; at += 12) {
    body.push(`${Array.from({ length: 12 }, zipfWord).join(" ")}.`);
  }
  return `${title}\n\n${body.join(" ")}\n`;
}

async function writeCorpus(root) {
  const texts = [];
  for (let index = 0; index < DOCS; index++) {
    const folder = path.join(root, `section-${String(index % 50).padStart(2, "0")}`);
    if (index < 50) await mkdir(folder, { recursive: true });
    const text = documentText(index);
    texts.push(text);
    await writeFile(path.join(folder, `doc-${index}.${index % 5 === 0 ? "txt" : "md"}`), text);
  }
  return texts;
}

/**
 * A yardstick for the machine's speed at the time: splitting the corpus into words and
 * counting them in a Map, the least any index must do. Median of 3.
 */
function tokenizeBaseline(texts) {
  const times = [];
  for (let repetition = 0; repetition < 3; repetition++) {
    const started = now();
    const counts = new Map();
    for (const text of texts) {
      for (const word of text.toLowerCase().split(/[\s\p{P}]+/u)) {
        counts.set(word, (counts.get(word) ?? 0) + 1);
      }
    }
    times.push(now() - started);
  }
  return median(times);
}

// Queries of one to three words, from the mid-frequency band (ranks 20–2000) where ranking works.
const queries = Array.from({ length: QUERIES }, () =>
  Array.from(
    { length: 1 + Math.floor(next() * 3) },
    () => VOCABULARY[20 + Math.floor(next() * 1980)],
  ).join(" "),
);

const makeAgent = (root) =>
  new Agent({ logger: pino({ level: "silent" }), knowledge: [{ name: "corpus", path: root }] });

async function search(agent, query, limit = 5) {
  const result = await agent.tools.execute({
    id: "bench",
    name: "knowledge_search",
    input: { query, limit },
  });
  if (result.isError) throw new Error(`knowledge_search failed: ${result.content}`);
  return JSON.parse(result.content);
}

const root = await mkdtemp(path.join(tmpdir(), "harnessx-bench-knowledge-"));
try {
  log(`writing ${DOCS} documents to ${root}`);
  const texts = await writeCorpus(root);
  const corpusBytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  const loadStart = loadavg()[0];
  const baselineMs = tokenizeBaseline(texts);

  // The index is built lazily by the first search: a fresh agent per repetition.
  const builds = [];
  let agent;
  for (let repetition = 0; repetition < REPETITIONS; repetition++) {
    globalThis.gc?.();
    agent = makeAgent(root);
    const started = now();
    await search(agent, queries[0]);
    builds.push(now() - started);
    log(`first search (index build) ${repetition + 1}/${REPETITIONS}: ${round(builds.at(-1))} ms`);
  }

  for (const query of queries.slice(0, 100)) await search(agent, query); // warm-up
  const timings = [];
  let hits = 0;
  for (const query of queries) {
    const started = now();
    hits += (await search(agent, query)).length;
    timings.push(now() - started);
  }
  const wide = [];
  for (const query of queries.slice(0, 200)) {
    const started = now();
    await search(agent, query, 50);
    wide.push(now() - started);
  }
  log(`${QUERIES} searches: p50 ${round(summarize(timings).p50)} ms`);

  console.log(
    JSON.stringify(
      {
        benchmark: "knowledge_search over a generated corpus (issue 12)",
        environment: {
          node: process.version,
          platform: `${process.platform}-${process.arch}`,
          cpu: cpus()[0]?.model ?? "unknown",
          cpuCount: cpus().length,
          loadAverage1m: { start: round(loadStart), end: round(loadavg()[0]) },
        },
        corpus: {
          documents: DOCS,
          megabytes: round(corpusBytes / 1e6),
          vocabulary: VOCABULARY.length,
          wordsPerDocument: "150-400, Zipf-distributed, seeded",
          folders: 50,
        },
        indexBuildMs: {
          median: round(median(builds)),
          repetitions: builds.map((each) => round(each)),
          note: "wall time of an agent's first knowledge_search: list + read every file + build the MiniSearch index + one search",
          overTokenizeBaseline: round(median(builds) / baselineMs, 1),
        },
        tokenizeBaselineMs: {
          median: round(baselineMs),
          note: "split the corpus into lower-cased words and count them in a Map, in this process: a yardstick of the machine's speed during the run",
        },
        searchMs: {
          limit5: summarize(timings),
          limit50: summarize(wide),
          meanHitsAtLimit5: round(hits / QUERIES),
          note: "agent.tools.execute('knowledge_search') on the built index: ranking, snippets, JSON",
        },
        heapUsedMb: round(process.memoryUsage().heapUsed / 1e6),
      },
      null,
      2,
    ),
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
