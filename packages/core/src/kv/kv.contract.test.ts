import { inject } from 'vitest';
import { etcdHarness, memoryHarness } from '../testing/harness.js';
import { kvContract } from '../testing/kv-contract.js';

kvContract('MemoryKv', memoryHarness);
kvContract('EtcdKv', () => etcdHarness(inject('etcdEndpoints')));
