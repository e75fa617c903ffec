export { type Clock, FakeClock } from '../clock.js';
export type {
  Compare,
  GrantOptions,
  KeyValue,
  Kv,
  Lease,
  RangeOptions,
  RangeResult,
  TxnOp,
  TxnOpResult,
  TxnResult,
  Watch,
  WatchEvent,
  WatchOptions,
} from '../kv/port.js';
export { MemoryKv, type MemoryKvOptions } from '../kv/memory.js';
export {
  ETCD_DATA_PREFIX,
  type EtcdCluster,
  type EtcdServer,
  type EtcdTlsOptions,
  type StartEtcdOptions,
  freePort,
  startEtcd,
  startEtcdCluster,
} from './etcd-server.js';
export { type KvHarness, etcdHarness, interceptKv, memoryHarness, withClockRunning } from './harness.js';
export { etcdGlobalSetup } from './vitest-etcd.js';
export { eventually, kvContract } from './kv-contract.js';
export { type StoreOverrides, taskStoreContract } from './task-store-contract.js';
export {
  type CertificateFiles,
  type CertificateOptions,
  type TestCa,
  createTestCa,
  selfSignedCertificate,
} from './test-ca.js';
