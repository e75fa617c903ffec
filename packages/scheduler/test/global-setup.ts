// One throwaway etcd for the whole run (or ETCD_ENDPOINTS); tests read it with inject('etcdEndpoints').
export { etcdGlobalSetup as setup } from '@maintd/core/testing';
