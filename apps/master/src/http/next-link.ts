/**
 * `headers` plus, when a next page exists, its `Link` (RFC 8288): the request's own path and
 * query with `cursor` replaced, the convention of every paged list.
 */
export function withNextLink(
  requestUrl: string,
  nextCursor: string | null,
  headers: Record<string, string>,
): Record<string, string> {
  if (nextCursor === null) return headers;
  const url = new URL(requestUrl);
  url.searchParams.set('cursor', nextCursor);
  return { ...headers, link: `<${url.pathname}${url.search}>; rel="next"` };
}
