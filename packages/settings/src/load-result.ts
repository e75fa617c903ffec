/** What a binary's startup should do, read from its argv and environment. */

/** The outcome of loading a binary's settings. Bad input is a result, not an exception. */
export type LoadResult<C> =
  | { readonly action: 'run'; readonly config: C }
  | { readonly action: 'help'; readonly text: string }
  /** `--version`/`-V`: the binary prints its version (see `versionText`). */
  | { readonly action: 'version' }
  | { readonly action: 'print-config'; readonly text: string }
  | { readonly action: 'error'; readonly message: string };
