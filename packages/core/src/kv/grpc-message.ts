/**
 * The text of a gRPC client error, cleaned for an operator. grpc-js builds its UNAVAILABLE
 * messages from templates (`14 UNAVAILABLE: No connection established. Last error: Error:
 * connect ECONNREFUSED 127.0.0.1:1. Resolution note: `): the status code repeats what the error
 * class says, the resolution note is usually empty, and wrapped errors repeat their causes. What
 * remains is one `: `-separated chain, each fragment once:
 * `No connection established: connect ECONNREFUSED 127.0.0.1:1`.
 */
export function cleanGrpcMessage(message: string): string {
  const text = message
    // `14 UNAVAILABLE: `: the numeric status and its name, wherever a wrapper repeated them.
    .replace(/(^|:\s+)\d{1,2} [A-Z][A-Z_]+:\s*/g, '$1')
    // An empty note, at the end or before the next sentence.
    .replace(/\.?\s*Resolution note:\s*(?=$|[.:])/g, '')
    .replace(/\.\s+Resolution note:\s*/g, ': resolution note: ')
    .replace(/\.\s+Last error:\s*/g, ': ')
    .trim();
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const raw of text.split(/:\s+/)) {
    // `Error: connect …`: the class name of a stringified Error says nothing.
    const fragment = raw.trim().replace(/\.+$/, '');
    const key = fragment.toLowerCase();
    if (fragment === '' || key === 'error' || seen.has(key)) continue;
    seen.add(key);
    kept.push(fragment);
  }
  // Nothing left (a bare status): say what the status said rather than nothing.
  return kept.length > 0 ? kept.join(': ') : message.trim();
}
