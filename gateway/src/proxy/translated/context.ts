import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { HeldBytes } from './held-bytes.js';
import { TURN_BYTES, createTurns } from './turns.js';
import type { RefusalReason } from '../../translation/refusal.js';

/** What the request side (requests.ts) and the answer side (answers.ts) of a translated route share. */

export interface TranslationLimits {
  /** TRANSLATION_MAX_BYTES: the largest body read whole to be translated. */
  maxBytes: number;
  /** TRANSLATION_MAX_DEPTH: the deepest nesting of a body translated. */
  maxDepth: number;
  /** TRANSLATION_MAX_INFLIGHT_BYTES: the bytes all translations in progress hold together. */
  held: HeldBytes;
}

/** One body the gateway would not translate, for `translation_failures_total`. */
export interface TranslationFailure {
  version: number;
  resource: string;
  direction: 'request' | 'response';
  reason: RefusalReason;
}

/** The requested version and resource template of a translated route, as its failures are counted. */
export interface RouteLabels {
  readonly version: number;
  readonly template: string;
}

/** `application/json` and every `application/*+json` (hal+json, problem+json, vnd.api+json), parameters allowed. */
const JSON_TYPE = /^\s*application\/(?:[\w.!#$%&'*^`|~-]+\+)?json\s*(?:;|$)/i;
export const isJsonType = (type: string): boolean => JSON_TYPE.test(type);

/** Seconds a 503 for a full translation budget asks the client to wait, and what its envelope says. */
export const BUSY_RETRY_AFTER_SECONDS = '1';
export const BUSY_DETAILS = 'the gateway holds as many bodies for translation as it may; retry shortly';

export interface TranslationContext {
  readonly limits: TranslationLimits;
  /** Counts one body not translated; returns the request's logger for its one warn line. */
  refused(
    request: FastifyRequest,
    route: RouteLabels,
    direction: TranslationFailure['direction'],
    reason: RefusalReason,
  ): FastifyBaseLogger;
  /** Counts and logs a body that found TRANSLATION_MAX_INFLIGHT_BYTES held. */
  warnBusy(request: FastifyRequest, route: RouteLabels, direction: TranslationFailure['direction']): void;
  /** Translates a small body at once, a large one in a turn of its own (turns.ts). */
  inTurn(bytes: Buffer, translate: () => void): void;
  /** A request body read as JSON, before it is translated: its field paths are recorded for an authenticated one. */
  sentBody(request: FastifyRequest, body: unknown): void;
}

export function createTranslationContext(
  limits: TranslationLimits,
  countFailure: (failure: TranslationFailure) => void,
  sentBody: (request: FastifyRequest, body: unknown) => void = () => undefined,
): TranslationContext {
  const turns = createTurns();
  const context: TranslationContext = {
    limits,
    refused(request, route, direction, reason) {
      countFailure({ version: route.version, resource: route.template, direction, reason });
      return request.log;
    },
    warnBusy(request, route, direction) {
      const { limit } = limits.held;
      context
        .refused(request, route, direction, 'busy')
        .warn(
          { version: route.version, resource: route.template, direction, limitBytes: limit },
          `translation: TRANSLATION_MAX_INFLIGHT_BYTES (${limit} bytes) are held by translations in progress`,
        );
    },
    inTurn(bytes, translate) {
      if (bytes.length < TURN_BYTES) translate();
      else turns(translate);
    },
    sentBody,
  };
  return context;
}
