import { createDeprecationReporter, type DeprecationOptions } from './report.js';

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

/**
 * A fetch that sends the consumer's `API-Key` and `API-Version` and reports each operation answered by a deprecated
 * version once (see the package's README): `onDeprecation` gets the method, URL, version, sunset, successor and
 * migration guide. The answer is returned as it came, at once; the report follows when the guide's URL is known.
 */
export function createFetch(options: CreateFetchOptions = {}): VersionRouterFetch {
  const { apiKey, apiVersion } = options;
  const version = apiVersion === undefined ? undefined : String(apiVersion);
  const report = createDeprecationReporter(options);
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  return async (input, init) => {
    let requestInit = init;
    if (apiKey !== undefined || version !== undefined) {
      const headers = headersOf(input, init);
      if (apiKey !== undefined && !headers.has('api-key')) headers.set('API-Key', apiKey);
      if (version !== undefined && !headers.has('api-version')) headers.set('API-Version', version);
      requestInit = { ...init, headers };
    }
    const response = await send(input, requestInit);
    if (!response.headers.has('deprecation')) return response;
    report({
      method: (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase(),
      url: response.url === '' ? urlOf(input) : response.url,
      answerVersion: response.headers.get('api-version'),
      requestVersion: () => headersOf(input, requestInit).get('api-version'),
      sunset: response.headers.get('sunset'),
      link: response.headers.get('link'),
    });
    return response;
  };
}
