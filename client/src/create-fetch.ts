import { createDeprecationReporter, tellsOfDeprecation, type DeprecationOptions } from './report.js';

export interface CreateFetchOptions extends DeprecationOptions {
  /** Sent as `API-Key` on every request that does not carry one of its own. */
  apiKey?: string;
  /** Sent as `API-Version` on every request that does not carry one of its own (the header form of a version). */
  apiVersion?: number | string;
}

/** A function with fetch's signature. */
export type VersionRouterFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const headersOf = (input: string | URL | Request, init: RequestInit | undefined): Headers =>
  new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));

function urlOf(input: string | URL | Request): string {
  if (typeof input === 'string') return input;
  return input instanceof URL ? input.href : input.url;
}

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/** As many as fetch itself follows. */
const MAX_REDIRECTS = 20;
/** Credentials fetch itself drops when a redirect leaves the origin, and the consumer's key. */
const CREDENTIAL_HEADERS = ['api-key', 'authorization', 'cookie', 'proxy-authorization'];
/** The headers that describe a body, dropped with it when a redirect turns the request into a GET. */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

/** A body fetch can send again: anything but a stream. */
const resendable = (body: RequestInit['body']): boolean =>
  body === null ||
  body === undefined ||
  typeof body === 'string' ||
  body instanceof ArrayBuffer ||
  ArrayBuffer.isView(body) ||
  body instanceof Blob ||
  body instanceof URLSearchParams ||
  body instanceof FormData;

/**
 * Sends a request that carries a key and follows its redirects itself, as fetch would (the method becomes GET after a
 * 303, and after a 301 or 302 of a POST; a stream body cannot be sent twice), except that the key never leaves the
 * origin it was sent to: from the first redirect to another origin on, `API-Key` (and what fetch itself drops there,
 * `Authorization`, `Cookie`) is no longer sent. fetch keeps a custom header such as `API-Key` across origins.
 */
async function followKeepingKeyHome(
  send: VersionRouterFetch,
  input: string | URL | Request,
  init: RequestInit & { headers: Headers },
): Promise<Response> {
  const request = input instanceof Request ? input : undefined;
  let url = new URL(urlOf(input));
  const home = url.origin;
  let method = (init.method ?? request?.method ?? 'GET').toUpperCase();
  let body = init.body ?? request?.body ?? null;
  const headers = init.headers;
  let response = await send(input, { ...init, redirect: 'manual' });
  for (let redirects = 0; ; redirects++) {
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
    if (redirects === MAX_REDIRECTS)
      throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
    await response.body?.cancel();
    url = new URL(location, url);
    if (
      (response.status === 303 && method !== 'GET' && method !== 'HEAD') ||
      (response.status <= 302 && method === 'POST')
    ) {
      method = 'GET';
      body = null;
      for (const name of BODY_HEADERS) headers.delete(name);
    } else if (!resendable(body)) {
      throw new TypeError('fetch failed', { cause: new Error('a stream body cannot be sent again after a redirect') });
    }
    if (url.origin !== home) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
    response = await send(url, {
      ...init,
      method,
      body,
      headers,
      signal: init.signal ?? request?.signal,
      redirect: 'manual',
    });
  }
}

/**
 * A fetch that sends the consumer's `API-Key` and `API-Version` and reports each operation answered by a deprecated
 * or removed version once (see the package's README): `onDeprecation` gets the method, URL, version, sunset,
 * successor and migration guide. The answer is returned as it came, at once; the report follows when the guide's
 * URL is known. A request that carries a key follows its redirects itself, and sends the key to its own origin only.
 */
export function createFetch(options: CreateFetchOptions = {}): VersionRouterFetch {
  const { apiKey, apiVersion } = options;
  const version = apiVersion === undefined ? undefined : String(apiVersion);
  const report = createDeprecationReporter(options);
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  return async (input, init) => {
    const headers = headersOf(input, init);
    if (apiKey !== undefined && !headers.has('api-key')) headers.set('API-Key', apiKey);
    if (version !== undefined && !headers.has('api-version')) headers.set('API-Version', version);
    const requestInit = { ...init, headers };
    const follows = (init?.redirect ?? (input instanceof Request ? input.redirect : 'follow')) === 'follow';
    const response =
      follows && headers.has('api-key')
        ? await followKeepingKeyHome(send, input, requestInit)
        : await send(input, requestInit);
    const deprecation = response.headers.has('deprecation');
    if (!tellsOfDeprecation(response.status, deprecation, response.headers.has('sunset'))) return response;
    report({
      method: (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase(),
      url: response.url === '' ? urlOf(input) : response.url,
      removed: !deprecation,
      answerVersion: response.headers.get('api-version'),
      requestVersion: () => headersOf(input, requestInit).get('api-version'),
      sunset: response.headers.get('sunset'),
      link: response.headers.get('link'),
    });
    return response;
  };
}
