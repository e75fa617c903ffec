import { describe } from 'vitest';
import type { KvHarness } from './harness.js';
import { auditContract } from './store-contract-audit.js';
import { capacityContract } from './store-contract-capacity.js';
import { clusterContract } from './store-contract-cluster.js';
import { compatContract } from './store-contract-compat.js';
import { storeContractFixture } from './store-contract-fixture.js';
import { fleetContract } from './store-contract-fleet.js';
import { gatesContract } from './store-contract-gates.js';
import { holdsContract } from './store-contract-holds.js';
import { kindsContract } from './store-contract-kinds.js';
import { laneContract } from './store-contract-lane.js';
import { queueContract } from './store-contract-queue.js';
import { recoveryContract } from './store-contract-recovery.js';
import { timelineContract } from './store-contract-timeline.js';

export type { StoreOverrides } from './store-contract-fixture.js';

/**
 * The TaskStore contract, run against any Kv adapter: dedupe, claims, target locks,
 * dependencies, recovery, history, coordination, the failure cooldown, records of a newer
 * release keeping their fields through this release's rewrites, kinds this release does not run,
 * the cluster record's feature gates, each store's timeline, the tasks a park holds, the audit trail and the masters' slot-time records. Every test runs
 * under its own random prefix; several store instances stand in for several masters.
 */
export function taskStoreContract(name: string, makeHarness: () => Promise<KvHarness>): void {
  describe(`TaskStore contract: ${name}`, () => {
    const fx = storeContractFixture(makeHarness);
    queueContract(fx);
    laneContract(fx);
    recoveryContract(fx);
    fleetContract(fx);
    gatesContract(fx);
    holdsContract(fx);
    compatContract(fx);
    kindsContract(fx);
    clusterContract(fx);
    timelineContract(fx);
    auditContract(fx);
    capacityContract(fx);
  });
}
