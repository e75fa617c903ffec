import type { Context } from 'hono';

/** Connection details @hono/node-server passes as the app's environment. */
export interface NodeBindings {
  readonly incoming?: { readonly socket?: { readonly remoteAddress?: string } };
}

/** The Hono environment of the master's app and each of its sub-apps. */
export interface AppEnv {
  Bindings: NodeBindings;
  /** Set by the API's authentication: the name of the token that authenticated this request. */
  Variables: { tokenName: string | undefined };
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether a request of this method changes something: only these are guarded and bounded. */
export function isMutation(method: string): boolean {
  return MUTATING.has(method);
}

/** The client's address, when the app is served over a socket (not under `app.request()`). */
export function remoteAddress(c: Context<AppEnv>): string | undefined {
  return (c.env as NodeBindings | undefined)?.incoming?.socket?.remoteAddress;
}

/**
 * Who made a mutation, as records and logs name them: `<token name>@<client address>` when a
 * named token authenticated the request (docs/ARCHITECTURE.md §3.4), else the client address.
 */
export function operatorOf(c: Context<AppEnv>): string {
  const address = remoteAddress(c) ?? 'unknown';
  const name = c.get('tokenName');
  return name === undefined ? address : `${name}@${address}`;
}
