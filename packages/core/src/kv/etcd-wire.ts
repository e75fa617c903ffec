/**
 * Translation between the Kv port's types and the etcd3 client's messages: keys and values as
 * buffers, revisions as numbers, compares and transaction ops in etcd's terms.
 */
import type { ICompare, IKeyValue, IRequestOp, IResponseOp } from 'etcd3';
import type { Compare, KeyValue, TxnOp, TxnOpResult } from './port.js';

/** The smallest key greater than every key that starts with `prefix`. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** A port key-value from etcd's, with an empty value for a keys-only read. */
export function fromEtcd(kv: IKeyValue, keysOnly = false): KeyValue {
  return {
    key: kv.key.toString(),
    value: keysOnly ? '' : kv.value.toString(),
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
    version: Number(kv.version),
    lease: kv.lease && kv.lease !== '0' ? kv.lease : undefined,
  };
}

/** etcd's name of each compare operator. */
const RESULT = { '==': 'Equal', '!=': 'NotEqual', '>': 'Greater', '<': 'Less' } as const;

/** A port compare as etcd's. */
export function toCompare(c: Compare): ICompare {
  const key = Buffer.from(c.key);
  const result = RESULT[c.op];
  switch (c.target) {
    case 'value':
      return { key, result, target: 'Value', value: Buffer.from(c.value) };
    case 'version':
      return { key, result, target: 'Version', version: c.value };
    case 'createRevision':
      return { key, result, target: 'Create', create_revision: c.value };
    case 'modRevision':
      return { key, result, target: 'Mod', mod_revision: c.value };
  }
}

/** A port transaction op as etcd's request op. */
export function toRequestOp(op: TxnOp): IRequestOp {
  switch (op.type) {
    case 'put':
      return {
        request_put: {
          key: Buffer.from(op.key),
          value: Buffer.from(op.value),
          ...(op.lease ? { lease: op.lease } : {}),
        },
      };
    case 'delete':
      return { request_delete_range: { key: Buffer.from(op.key) } };
    case 'get':
      return { request_range: { key: Buffer.from(op.key) } };
  }
}

/** The port's result of `op`, from etcd's response to it. */
export function fromResponseOp(op: TxnOp, res: IResponseOp | undefined): TxnOpResult {
  switch (op.type) {
    case 'put':
      return { type: 'put' };
    case 'delete':
      return { type: 'delete', deleted: Number(res?.response_delete_range?.deleted ?? 0) };
    case 'get': {
      const kv = res?.response_range?.kvs?.[0];
      return { type: 'get', kv: kv ? fromEtcd(kv) : undefined };
    }
  }
}
