/** Most links one router remembers; past that it starts afresh. */
const MAX_REMEMBERED = 1024;

/** Adds a paged list's `Link` header; see {@link nextLinks}. */
export type WithNextLink = (
  requestUrl: string,
  nextCursor: string | null,
  headers: Record<string, string>,
) => Record<string, string>;

/**
 * `headers` plus, when a next page exists, its `Link` (RFC 8288): the request's own path and
 * query with `cursor` replaced, the convention of every paged list. Each link is built once per
 * request URL and cursor: polling readers ask for the same pages, and parsing and re-serialising
 * the URL cost a list page served from memory more than the rest of its handler.
 */
export function nextLinks(): WithNextLink {
  const built = new Map<string, string>();
  return (requestUrl, nextCursor, headers) => {
    if (nextCursor === null) return headers;
    const key = `${nextCursor} ${requestUrl}`;
    let link = built.get(key);
    if (link === undefined) {
      const url = new URL(requestUrl);
      url.searchParams.set('cursor', nextCursor);
      link = `<${url.pathname}${url.search}>; rel="next"`;
      if (built.size >= MAX_REMEMBERED) built.clear();
      built.set(key, link);
    }
    return { ...headers, link };
  };
}
