// The run store's roles (DESIGN.md "The run store, by role"), each with a contract of its own.
import type { BackendFactory } from "../backend-contract.js";
import { describeCallLedgerContract } from "./call-ledger.contract.js";
import { describeEventLogContract } from "./event-log.contract.js";
import { describeJobQueueContract } from "./job-queue.contract.js";
import { describeLeasesContract } from "./leases.contract.js";
import { describeRunStoreContract } from "./run-store.contract.js";
import { describeRunTreeContract } from "./run-tree.contract.js";

/** Every role's contract, on the backends `factory` makes. */
export function describeRoleContracts(name: string, factory: BackendFactory): void {
  describeRunStoreContract(name, factory);
  describeLeasesContract(name, factory);
  describeCallLedgerContract(name, factory);
  describeEventLogContract(name, factory);
  describeJobQueueContract(name, factory);
  describeRunTreeContract(name, factory);
}
