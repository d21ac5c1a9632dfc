// Figures of a benchmark: command-line options, medians, percentiles, summaries.

/** `--name N` or `--name=N`, an integer of at least `min` (1 unless given). */
export function option(name, fallback, { min = 1 } = {}) {
  const args = process.argv.slice(2);
  let raw;
  for (let index = 0; index < args.length; index++) {
    if (args[index] === `--${name}`) raw = args[index + 1];
    else if (args[index].startsWith(`--${name}=`)) raw = args[index].slice(name.length + 3);
  }
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`--${name} must be an integer of at least ${min} (got ${raw}).`);
  }
  return value;
}

export const round = (value, digits = 2) => Number(value.toFixed(digits));

export function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Nearest-rank percentile of `values` (0 < p ≤ 100). */
export function percentile(values, p) {
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** p50 / p99 / mean / max of durations in ms. */
export function summarize(milliseconds) {
  const mean = milliseconds.reduce((sum, each) => sum + each, 0) / milliseconds.length;
  return {
    p50: round(percentile(milliseconds, 50)),
    p99: round(percentile(milliseconds, 99)),
    mean: round(mean),
    max: round(Math.max(...milliseconds)),
    samples: milliseconds.length,
  };
}

export const now = () => performance.now();

/** Runs `task(index)` for 0 ≤ index < count with at most `width` in flight. */
export async function pool(count, width, task) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) {
      const index = next++;
      await task(index);
    }
  });
  await Promise.all(lanes);
}
