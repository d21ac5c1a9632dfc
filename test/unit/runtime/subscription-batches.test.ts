import { describe, expect, it } from "vitest";
import { SubscriptionBatches } from "../../../src/runtime/subscription-batches.js";

function recorder(fail = false) {
  const sent: string[] = [];
  const batches = new SubscriptionBatches({
    subscribe: async (names) => {
      sent.push(`SUBSCRIBE ${names.join(" ")}`);
      if (fail) throw new Error("refused");
    },
    unsubscribe: (names) => {
      sent.push(`UNSUBSCRIBE ${names.join(" ")}`);
    },
  });
  return { sent, batches };
}

describe("SubscriptionBatches", () => {
  it("sends the channels joined and left in one turn as one UNSUBSCRIBE, then one SUBSCRIBE", async () => {
    const { sent, batches } = recorder();

    const joined = [batches.join("a"), batches.join("b")];
    batches.leave("old");
    // A promise callback of the same turn: a reader started by a reply read with the others.
    await Promise.resolve().then(() => {
      joined.push(batches.join("c"));
      batches.leave("a");
    });
    await Promise.all(joined);

    // "a" left and joined again (another reader) in one turn stays subscribed.
    expect(sent).toEqual(["UNSUBSCRIBE old a", "SUBSCRIBE a b c"]);
  });

  it("sends each turn's channels apart from the next turn's", async () => {
    const { sent, batches } = recorder();

    await batches.join("a");
    batches.leave("a");
    await batches.join("b");

    expect(sent).toEqual(["SUBSCRIBE a", "UNSUBSCRIBE a", "SUBSCRIBE b"]);
  });

  it("rejects every join of a batch whose SUBSCRIBE fails", async () => {
    const { batches } = recorder(true);

    const outcomes = await Promise.allSettled([batches.join("a"), batches.join("b")]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
  });

  it("once closed, sends nothing and rejects joins, those waiting included", async () => {
    const { sent, batches } = recorder();

    const waiting = batches.join("a");
    batches.close();
    batches.leave("b");

    await expect(waiting).rejects.toThrow(/closed/);
    await expect(batches.join("c")).rejects.toThrow(/closed/);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([]);
  });
});
