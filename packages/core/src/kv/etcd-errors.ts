import {
  ClientClosedError,
  EtcdAuthenticationFailedError,
  EtcdLeaseInvalidError,
  EtcdPermissionDeniedError,
  GRPCCancelledError,
  GRPCDeadlineExceededError,
  GRPCUnavailableError,
  isRecoverableError,
} from 'etcd3';
import { isBrokenCircuitError } from 'cockatiel';
import {
  LeaseNotFoundError,
  MaintdError,
  StoreAccessDeniedError,
  StoreFullError,
  StoreUnavailableError,
} from '../errors.js';
import { cleanGrpcMessage } from './grpc-message.js';

/** RESOURCE_EXHAUSTED with etcd's ErrNoSpace: the space quota is reached and the NOSPACE alarm raised. */
export function isNoSpace(err: Error): boolean {
  return /database space exceeded/i.test(err.message);
}

/** Maps the etcd3 client's many failure shapes onto maintd's error hierarchy. */
export function mapError(err: unknown): Error {
  if (err instanceof MaintdError) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  if (err instanceof EtcdLeaseInvalidError || /lease not found/i.test(e.message)) {
    return new LeaseNotFoundError(e.message, { cause: err });
  }
  if (err instanceof EtcdAuthenticationFailedError) {
    return new StoreAccessDeniedError(`etcd refused the credentials: ${cleanGrpcMessage(e.message)}`, { cause: err });
  }
  // The credentials were accepted: the user's roles do not grant the keys. Every key maintd
  // touches lies under its prefix, and session leases need no permission.
  if (err instanceof EtcdPermissionDeniedError) {
    return new StoreAccessDeniedError(
      `etcd denied access to the keys under the prefix: ${cleanGrpcMessage(e.message)} (check that the etcd role of ETCD_USERNAME covers ETCD_PREFIX)`,
      { cause: err },
    );
  }
  if (isNoSpace(e)) {
    return new StoreFullError(
      `etcd is out of space (NOSPACE alarm: ${cleanGrpcMessage(e.message)}) and refuses writes until it is ` +
        'compacted, defragmented and the alarm disarmed',
      { cause: err },
    );
  }
  if (
    isBrokenCircuitError(err) ||
    err instanceof GRPCDeadlineExceededError ||
    err instanceof GRPCUnavailableError ||
    err instanceof GRPCCancelledError ||
    err instanceof ClientClosedError ||
    isRecoverableError(e)
  ) {
    return new StoreUnavailableError(`etcd unavailable: ${cleanGrpcMessage(e.message)}`, { cause: err });
  }
  return new MaintdError(`etcd error: ${cleanGrpcMessage(e.message)}`, { cause: err });
}
