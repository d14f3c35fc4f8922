import { DecoratorHandler, type Dispatcher } from 'undici';
import {
  createDeprecationReporter,
  tellsOfDeprecation,
  type DeprecationOptions,
  type DeprecatedAnswer,
} from './report.js';

export type { DeprecationOptions, DeprecationReport, OnDeprecation } from './report.js';

type OnResponseStartArgs = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>;
type ResponseHeaders = OnResponseStartArgs[2];

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
 * undici's DecoratorHandler, which passes every event on to the handler it wraps. Its types declare the constructor
 * alone: this names the handler methods it has, for a subclass to call.
 */
const ForwardingHandler: new (handler: Dispatcher.DispatchHandler) => Dispatcher.DispatchHandler = DecoratorHandler;

/**
 * Tells `onDeprecated` about an answer that carries `Deprecation`, or that is a removed version's 410 with `Sunset`,
 * and passes every event on.
 */
class DeprecationHandler extends ForwardingHandler {
  readonly #onDeprecated: (headers: ResponseHeaders) => void;

  constructor(handler: Dispatcher.DispatchHandler, onDeprecated: (headers: ResponseHeaders) => void) {
    super(handler);
    this.#onDeprecated = onDeprecated;
  }

  override onResponseStart(...args: OnResponseStartArgs): void {
    const [, statusCode, headers] = args;
    if (tellsOfDeprecation(statusCode, headers.deprecation !== undefined, headers.sunset !== undefined))
      this.#onDeprecated(headers);
    super.onResponseStart?.(...args);
  }
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
    return dispatch(opts, new DeprecationHandler(handler, onDeprecated));
  };
}
