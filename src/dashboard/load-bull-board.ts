import { importOptional, type LazyPackage } from "../core/optional-dependency.js";

/** The queue view's packages: optional peer dependencies, loaded when a dashboard shows queues. */
export const BULL_BOARD: LazyPackage = {
  feature: "The dashboard's queue view (createDashboard on a Redis backend)",
  packages: [
    { name: "@bull-board/api", range: "^9.10.2" },
    { name: "@bull-board/express", range: "^9.10.1" },
  ],
};

/** bull-board's API, its BullMQ adapter and its express adapter; `DependencyMissingError` without them. */
export const loadBullBoard = () =>
  importOptional(BULL_BOARD, () =>
    Promise.all([
      import("@bull-board/api"),
      import("@bull-board/api/bullMQAdapter"),
      import("@bull-board/express"),
    ]),
  );
