import { inject } from 'vitest';
import { etcdHarness, memoryHarness } from './testing/harness.js';
import { taskStoreContract } from './testing/task-store-contract.js';

taskStoreContract('MemoryKv', memoryHarness);
taskStoreContract('EtcdKv', () => etcdHarness(inject('etcdEndpoints')));
