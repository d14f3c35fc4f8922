/**
 * What the notices are delivered to in tests: a real SMTP server (npm `smtp-server`) whose every message is
 * parsed by `mailparser`, and a webhook receiver that checks every signature with `standardwebhooks`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';

export interface TestSmtp {
  port: number;
  url: string;
  /** Every message accepted, parsed, in order. */
  messages: ParsedMail[];
  /** Delays the answer to each message's data by this long (a slow server; 0: none). */
  delayMs: number;
  /** Stops listening (a server that is down); `listen()` takes the same port again. */
  close(): Promise<void>;
  listen(): Promise<void>;
}

/** A plain SMTP server on 127.0.0.1 without TLS or login, as a mail catcher is. */
export async function startTestSmtp(port = 0): Promise<TestSmtp> {
  const messages: ParsedMail[] = [];
  let server: SMTPServer | undefined;
  const smtp: TestSmtp = {
    port,
    url: '',
    messages,
    delayMs: 0,
    async listen() {
      const created = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        onData(stream, _session, callback) {
          simpleParser(stream).then(
            (parsed) => {
              messages.push(parsed);
              setTimeout(() => callback(), smtp.delayMs);
            },
            (err: Error) => callback(err),
          );
        },
      });
      await new Promise<void>((resolve, reject) => {
        created.once('error', reject);
        created.listen(smtp.port, '127.0.0.1', () => resolve());
      });
      created.on('error', () => undefined);
      server = created;
      smtp.port = (created.server.address() as AddressInfo).port;
      smtp.url = `smtp://127.0.0.1:${smtp.port}`;
    },
    close() {
      const closing = server;
      server = undefined;
      return new Promise((resolve) => (closing === undefined ? resolve() : closing.close(() => resolve())));
    },
  };
  await smtp.listen();
  return smtp;
}

export interface ReceivedWebhook {
  headers: IncomingMessage['headers'];
  body: string;
  /** What `standardwebhooks` verified (it throws on a bad signature, so only verified ones are kept). */
  payload: { type: string; data: Record<string, unknown> };
}

export interface TestWebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Requests whose signature did not verify. */
  refused: number;
  /** What each request is answered: a status, or 'hang' (never answered). */
  answer: number | 'hang';
  close(): Promise<void>;
}

/** An HTTP receiver verifying Standard Webhooks signatures with the consumer's `whsec_` secret. */
export async function startWebhookReceiver(secret: () => string): Promise<TestWebhookReceiver> {
  const hanging = new Set<IncomingMessage>();
  const receiver: TestWebhookReceiver = {
    url: '',
    received: [],
    refused: 0,
    answer: 204,
    close: async () => undefined,
  };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      try {
        const payload = new Webhook(secret()).verify(
          body,
          request.headers as Record<string, string>,
        ) as ReceivedWebhook['payload'];
        receiver.received.push({ headers: request.headers, body, payload });
      } catch {
        receiver.refused++;
        response.writeHead(400).end();
        return;
      }
      if (receiver.answer === 'hang') hanging.add(request);
      else response.writeHead(receiver.answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/notices`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
