// Reference for bench/README.md#verdict ("What limits it"): Fastify and @fastify/reply-from as the gateway uses
// them (the same undici Pool), with none of the gateway's own per-request work: no request-id handling,
// write deadline, log line, metrics or version policy. Run by bench/ab.mjs with GATEWAY_PORT and BACKEND_URL set.
import Fastify from 'fastify';
import replyFrom from '@fastify/reply-from';
import { Pool } from 'undici';

const pool = new Pool(process.env.BACKEND_URL, { connections: 128 });
const app = Fastify({ logger: false });
await app.register(replyFrom, { base: process.env.BACKEND_URL, undici: pool });
app.get('/v2/orders/:id', (_request, reply) => {
  void reply.header('vary', 'API-Version');
  void reply.from();
});
const api = await app.listen({ port: Number(process.env.GATEWAY_PORT), host: '127.0.0.1' });
// The line bench/harness.mjs waits for, shaped like the services' own.
process.stdout.write(`${JSON.stringify({ msg: 'listening', api })}\n`);
process.on('SIGTERM', () => process.exit(0));
