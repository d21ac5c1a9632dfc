// Bytes a process allocates over a stretch, collected or not: V8's sampling heap profiler (the
// inspector, in this thread) with objects collected by minor and major GCs kept in the profile.
// Each sample stands for about `SAMPLING_INTERVAL` bytes; the total is the profile's sizes
// summed (an estimate: the sampler's error is small over megabytes).
import { Session } from "node:inspector";

const SAMPLING_INTERVAL = 4096;

const post = (session, method, params = {}) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );

/** Starts sampling; `stop()` resolves with the bytes allocated meanwhile. */
export async function countAllocations() {
  const session = new Session();
  session.connect();
  await post(session, "HeapProfiler.enable");
  await post(session, "HeapProfiler.startSampling", {
    samplingInterval: SAMPLING_INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    async stop() {
      const { profile } = await post(session, "HeapProfiler.stopSampling");
      await post(session, "HeapProfiler.disable");
      session.disconnect();
      let bytes = 0;
      const pending = [profile.head];
      while (pending.length > 0) {
        const node = pending.pop();
        bytes += node.selfSize;
        pending.push(...node.children);
      }
      return bytes;
    },
  };
}
