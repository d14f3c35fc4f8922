// `npm run mail-sink`: a local SMTP server that accepts every message and prints it, so the deprecation notices
// of `npm start` can be read without Docker (MailDev is the compose stack's). Plain SMTP on loopback, no TLS, no
// login, as a mail catcher is; nothing is stored. Point the gateway at it:
//   SMTP_URL=smtp://127.0.0.1:1025 NOTICE_FROM='API team <api@example.com>' npm start
// MAIL_SINK_PORT picks another port (0: any free one); the first line says where it listens.
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const raw = process.env.MAIL_SINK_PORT ?? '1025';
const port = /^\d+$/.test(raw) && Number(raw) <= 65_535 ? Number(raw) : undefined;
if (port === undefined) {
  process.stderr.write(`MAIL_SINK_PORT: must be a port number (0-65535) (got "${raw}")\n`);
  process.exit(2);
}

/** One message as a person reads it: the envelope lines, then the plain text. */
function printed(mail) {
  const rule = '-'.repeat(72);
  const lines = [
    rule,
    `From: ${mail.from?.text ?? ''}`,
    `To: ${Array.isArray(mail.to) ? mail.to.map((to) => to.text).join(', ') : (mail.to?.text ?? '')}`,
    `Subject: ${mail.subject ?? ''}`,
    `Message-ID: ${mail.messageId ?? ''}`,
    `Date: ${mail.date?.toISOString() ?? ''}`,
    '',
    (mail.text ?? '(no plain-text part)').trimEnd(),
    '',
  ];
  return `${lines.join('\n')}\n`;
}

const server = new SMTPServer({
  // A gateway keeps its pooled SMTP connection open between notices: on a stop, wait a second for a message
  // under way, not smtp-server's default 30 s for a connection that may never close.
  closeTimeout: 1_000,
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, _session, callback) {
    simpleParser(stream).then(
      (mail) => {
        process.stdout.write(printed(mail));
        callback();
      },
      (err) => callback(err),
    );
  },
});
server.on('error', (err) => process.stderr.write(`mail-sink: ${err.message}\n`));
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`mail-sink: listening on smtp://127.0.0.1:${server.server.address().port}; Ctrl-C stops it\n`);
});
const stop = () => server.close(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
