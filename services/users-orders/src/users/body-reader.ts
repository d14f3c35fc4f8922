import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { HttpError } from '@version-router/platform/errors';
import { serverLimits } from '@version-router/platform/server-limits';

/** What the body reader hands the handler: the bytes, or only how many arrived when there were too many. */
export type ReceivedBody = { kind: 'complete'; bytes: Buffer } | { kind: 'oversized'; receivedBytes: number };

export const oversizedDetails = `body exceeds ${serverLimits.bodyLimitBytes} bytes`;

/**
 * Reads every request body as raw bytes and decodes it as JSON whatever its Content-Type (`curl -d` sends a
 * form type), so the handlers can
 * answer 400 `invalid JSON` where Fastify would answer 413 or 415.
 *
 * Fastify answers 415 for a missing or malformed Content-Type before any parser runs, and 413 from
 * Content-Length for its buffering parsers; so every request is relabelled application/json and the
 * parser reads the stream itself. An oversized upload is read to its end and discarded (bounded) so the
 * client sees the 400 instead of a reset: after a parser error Fastify closes the connection while the
 * client may still be uploading, which a proxy in front turns into a 502.
 */
async function bodyReaderPlugin(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addHook('onRequest', (request, _reply, done) => {
    request.headers['content-type'] = 'application/json';
    done();
  });
  app.addContentTypeParser('application/json', (request, payload, done) => {
    readBody(request, payload, done);
  });
}

export const bodyReader = fp(bodyReaderPlugin, { name: 'body-reader' });

function readBody(
  request: FastifyRequest,
  payload: NodeJS.ReadableStream,
  done: (err: Error | null, body?: ReceivedBody) => void,
): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (err: Error | null, body?: ReceivedBody): void => {
    if (finished) return;
    finished = true;
    payload.removeListener('data', onData);
    done(err, body);
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received <= serverLimits.bodyLimitBytes) {
      chunks.push(chunk);
    } else if (received > serverLimits.oversizedDrainLimitBytes) {
      // Past the drain bound the connection is given up on: Fastify closes it after this 400.
      request.log.info({ receivedBytes: received }, 'oversized upload beyond the drain limit');
      finish(new HttpError(400, 'invalid JSON', oversizedDetails));
    } else {
      chunks.length = 0;
    }
  };
  payload.on('data', onData);
  payload.once('end', () => {
    finish(
      null,
      received > serverLimits.bodyLimitBytes
        ? { kind: 'oversized', receivedBytes: received }
        : { kind: 'complete', bytes: Buffer.concat(chunks, received) },
    );
  });
  // An aborted upload has nobody to answer; finishing with the error releases the request.
  payload.once('error', (err: Error) => finish(err));
  payload.once('close', () => finish(new Error('request body aborted')));
}
