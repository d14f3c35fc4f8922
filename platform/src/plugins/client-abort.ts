import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/** nginx's status for a request whose client closed the connection before the answer was complete. */
const CLIENT_CLOSED_REQUEST = 499;

class UnfinishedResponse extends Error {
  override name = 'UnfinishedResponse';
}

/** Responses this process cut itself, with the status they count under. */
const cutByServer = new WeakSet<ServerResponse>();

/**
 * Makes a request whose connection closes before its answer is complete count as answered with 499
 * (docs/replicas.md#aborted-requests). Fastify runs the onResponse hooks (the request metrics of
 * both processes, the gateway's version counters and consumers) and then the log line when the
 * response emits 'finish' or 'error'; a response whose connection closed first emits neither, so such
 * a request was forwarded but never counted. Its 'close' is turned into that 'error'. A response the
 * write deadline cut (a client that stopped reading) counts as 499 too; one this process cut for a
 * reason of its own (`cutResponse`) keeps the status it was given.
 */
export function reportClientAbort(reply: FastifyReply): void {
  const response = reply.raw;
  response.once('close', () => {
    // Finished, or no Fastify listener left to hear it (nothing would count it; an unheard 'error' throws).
    if (response.writableFinished || response.listenerCount('error') === 0) return;
    if (!cutByServer.has(response)) response.statusCode = CLIENT_CLOSED_REQUEST;
    response.emit(
      'error',
      new UnfinishedResponse(`the connection closed before the answer was complete (${response.statusCode})`),
    );
  });
}

/**
 * Closes the connection of an answer that cannot be completed (its upstream failed half-way), so the
 * client cannot take a cut body for whole; it counts under `status`, not as the client's 499.
 */
export function cutResponse(reply: FastifyReply, status: number): void {
  cutByServer.add(reply.raw);
  reply.raw.statusCode = status;
  reply.raw.destroy();
}
