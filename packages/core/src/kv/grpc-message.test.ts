import { describe, expect, it } from 'vitest';
import { cleanGrpcMessage } from './grpc-message.js';

describe('cleanGrpcMessage', () => {
  it('drops the status code, an empty resolution note and the stringified Error class', () => {
    expect(
      cleanGrpcMessage(
        '14 UNAVAILABLE: No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1. Resolution note: ',
      ),
    ).toBe('No connection established: connect ECONNREFUSED 127.0.0.1:1');
  });

  it('keeps a resolution note that says something', () => {
    expect(
      cleanGrpcMessage(
        '14 UNAVAILABLE: No connection established. Last error: null. Resolution note: DNS resolution failed for etcd.invalid:2379',
      ),
    ).toBe('No connection established: null: resolution note: DNS resolution failed for etcd.invalid:2379');
    expect(cleanGrpcMessage('14 UNAVAILABLE: No addresses resolved. Resolution note: ')).toBe('No addresses resolved');
  });

  it('says each fragment once when a wrapper repeats its cause', () => {
    const grpc =
      '14 UNAVAILABLE: No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1. Resolution note: ';
    expect(cleanGrpcMessage(`${grpc}: ${grpc}`)).toBe('No connection established: connect ECONNREFUSED 127.0.0.1:1');
  });

  it('leaves other messages as they are, colons inside a fragment included', () => {
    expect(cleanGrpcMessage('Execution prevented because the circuit breaker is open')).toBe(
      'Execution prevented because the circuit breaker is open',
    );
    expect(cleanGrpcMessage('4 DEADLINE_EXCEEDED: Deadline exceeded after 5.002s,LB pick: 0.001s')).toBe(
      'Deadline exceeded after 5.002s,LB pick: 0.001s',
    );
    expect(cleanGrpcMessage('connect ECONNREFUSED [::1]:2379')).toBe('connect ECONNREFUSED [::1]:2379');
  });

  it('falls back to the raw text when nothing would be left', () => {
    expect(cleanGrpcMessage('14 UNAVAILABLE: ')).toBe('14 UNAVAILABLE:');
    expect(cleanGrpcMessage('')).toBe('');
  });
});
