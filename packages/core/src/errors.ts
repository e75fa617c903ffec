/**
 * Base class of every error maintd throws on purpose. Expected outcomes (a dedupe hit, a lost
 * CAS race, a target below the threshold) are return values, never errors.
 */
export class MaintdError extends Error {
  /** The error class, as shown in stack traces. */
  override readonly name: string = 'MaintdError';
  /** A stable machine-readable code; HTTP mapping switches on the class, logs on this. */
  readonly code: string = 'maintd_error';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The backing store (etcd) did not answer in time, refused, or its client circuit is open. */
export class StoreUnavailableError extends MaintdError {
  /** The error class, as shown in stack traces. */
  override readonly name: string = 'StoreUnavailableError';
  /** Stable machine-readable code of this error class. */
  override readonly code: string = 'store_unavailable';
}

/**
 * etcd answers but refuses every write: its database reached its space quota and it raised the
 * NOSPACE alarm. Reads still work. It lasts until an operator compacts and defragments etcd and
 * disarms the alarm (docs/DEPLOY.md), so it is a {@link StoreUnavailableError} to every caller
 * that retries, with a message that says what to do.
 */
export class StoreFullError extends StoreUnavailableError {
  /** The error class, as shown in stack traces. */
  override readonly name: string = 'StoreFullError';
  /** Stable machine-readable code of this error class. */
  override readonly code: string = 'store_full';
}

/**
 * The backing store (etcd) answered and refused us: wrong credentials, or a user without the
 * permission the call needs. Retrying cannot help; the configuration must change.
 */
export class StoreAccessDeniedError extends MaintdError {
  /** The error class, as shown in stack traces. */
  override readonly name = 'StoreAccessDeniedError';
  /** Stable machine-readable code of this error class. */
  override readonly code = 'store_access_denied';
}

/**
 * A `finish` (or any claim-guarded write) found that the claim is no longer ours: the session
 * lease expired or was revoked and the task was recovered by someone else. Nothing was written.
 */
export class ClaimLostError extends MaintdError {
  /** The error class, as shown in stack traces. */
  override readonly name = 'ClaimLostError';
  /** Stable machine-readable code of this error class. */
  override readonly code = 'claim_lost';
  /** The id of the task whose claim was lost. */
  readonly taskId: string;

  constructor(taskId: string, options?: { cause?: unknown }) {
    super(`task '${taskId}' lost its etcd claim before completion`, options);
    this.taskId = taskId;
  }
}

/** A compare-and-swap loop gave up after its bounded number of attempts. */
export class ContentionError extends MaintdError {
  /** The error class, as shown in stack traces. */
  override readonly name = 'ContentionError';
  /** Stable machine-readable code of this error class. */
  override readonly code = 'contention';
}

/** Input failed validation at the edge; `field` names what was wrong. */
export class ValidationError extends MaintdError {
  /** The error class, as shown in stack traces. */
  override readonly name = 'ValidationError';
  /** Stable machine-readable code of this error class. */
  override readonly code = 'validation';
  /** The offending field (dotted path), when one can be named. */
  readonly field: string | undefined;

  constructor(message: string, options?: { cause?: unknown; field?: string }) {
    super(message, options);
    this.field = options?.field;
  }
}

/** A stored value could not be decoded: written by something else, or corrupted. */
export class CorruptRecordError extends MaintdError {
  /** The error class, as shown in stack traces. */
  override readonly name = 'CorruptRecordError';
  /** Stable machine-readable code of this error class. */
  override readonly code = 'corrupt_record';
  /** The key whose value failed to decode. */
  readonly key: string;

  constructor(key: string, options?: { cause?: unknown }) {
    super(`stored value at '${key}' is not a valid record`, options);
    this.key = key;
  }
}

/**
 * A watch asked for history that the store has already compacted away. The watcher must
 * re-sync from a fresh range read.
 */
export class WatchCompactedError extends MaintdError {
  /** The error class, as shown in stack traces. */
  override readonly name = 'WatchCompactedError';
  /** Stable machine-readable code of this error class. */
  override readonly code = 'watch_compacted';
  /** The oldest revision still available, when the store reported it. */
  readonly compactRevision: number | undefined;

  constructor(message: string, options?: { cause?: unknown; compactRevision?: number }) {
    super(message, options);
    this.compactRevision = options?.compactRevision;
  }
}

/** The operation was refused because the resource was closed or is shutting down. */
export class ClosedError extends MaintdError {
  /** The error class, as shown in stack traces. */
  override readonly name = 'ClosedError';
  /** Stable machine-readable code of this error class. */
  override readonly code = 'closed';
}

/** A write named a lease the store does not know (expired or revoked). Nothing was written. */
export class LeaseNotFoundError extends MaintdError {
  /** The error class, as shown in stack traces. */
  override readonly name = 'LeaseNotFoundError';
  /** Stable machine-readable code of this error class. */
  override readonly code = 'lease_not_found';
}
