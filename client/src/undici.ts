import type { Dispatcher } from 'undici';
import {
  createDeprecationReporter,
  tellsOfDeprecation,
  type DeprecationOptions,
  type DeprecatedAnswer,
} from './report.js';

export type { DeprecationOptions, DeprecationReport, OnDeprecation } from './report.js';

type ResponseHeaders = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2];

function responseHeader(headers: ResponseHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/** One request header from any of the forms undici takes them in: an object, flat `[name, value, …]`, or pairs. */
function requestHeader(headers: Dispatcher.DispatchOptions['headers'], name: string): string | null {
  if (headers === null || headers === undefined) return null;
  const pairs: [string, string | string[] | undefined][] = [];
  if (Array.isArray(headers))
    for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([String(headers[i]), headers[i + 1]]);
  else if (Symbol.iterator in headers) for (const [key, value] of headers) pairs.push([key, value]);
  else pairs.push(...Object.entries(headers));
  const value = pairs.find(([key]) => key.toLowerCase() === name)?.[1];
  if (Array.isArray(value)) return value.join(', ');
  return typeof value === 'string' ? value : null;
}

/**
 * Passes every event on to the handler it wraps, and tells `onDeprecated` about an answer that carries `Deprecation`,
 * or that is a removed version's 410 with `Sunset`.
 */
function deprecationHandler(
  handler: Dispatcher.DispatchHandler,
  onDeprecated: (headers: ResponseHeaders) => void,
): Dispatcher.DispatchHandler {
  return {
    onRequestStart: (controller, context: unknown) => handler.onRequestStart?.(controller, context),
    onRequestUpgrade: (controller, statusCode, headers, socket) =>
      handler.onRequestUpgrade?.(controller, statusCode, headers, socket),
    onResponseStart(controller, statusCode, headers, statusMessage) {
      if (tellsOfDeprecation(statusCode, headers.deprecation !== undefined, headers.sunset !== undefined))
        onDeprecated(headers);
      handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
    },
    onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
    onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
    onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
  };
}

/**
 * An undici interceptor (`new Agent().compose(deprecationInterceptor())`, `dispatcher.compose(…)`) that reports each
 * operation answered by a deprecated or removed version once, as createFetch does. It reads the answer's headers only: the
 * body streams through untouched. It needs the request's origin, which an Agent's requests always carry.
 */
export function deprecationInterceptor(options: DeprecationOptions = {}): Dispatcher.DispatcherComposeInterceptor {
  const report = createDeprecationReporter(options);
  return (dispatch) => (opts, handler) => {
    const onDeprecated = (headers: ResponseHeaders): void => {
      const answer: DeprecatedAnswer = {
        method: opts.method,
        url: `${opts.origin === undefined ? '' : String(opts.origin).replace(/\/$/, '')}${opts.path}`,
        // Told of without Deprecation: a removed version's 410.
        removed: headers.deprecation === undefined,
        answerVersion: responseHeader(headers, 'api-version'),
        requestVersion: () => requestHeader(opts.headers, 'api-version'),
        sunset: responseHeader(headers, 'sunset'),
        link: responseHeader(headers, 'link'),
      };
      report(answer);
    };
    return dispatch(opts, deprecationHandler(handler, onDeprecated));
  };
}
