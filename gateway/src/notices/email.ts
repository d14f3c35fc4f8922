import { createTransport } from 'nodemailer';
import type { Mailbox } from '../config.js';
import { within, type NoticeChannel } from './channel.js';
import { subjectOf, textOf } from './message.js';

export interface EmailChannelOptions {
  /** SMTP_URL. */
  smtpUrl: string;
  /** NOTICE_FROM. */
  from: Mailbox;
  /** NOTICES_SEND_TIMEOUT_MS: the longest one delivery may take. */
  timeoutMs: number;
}

/**
 * Notices by e-mail to the consumer's contact address, one SMTP connection per message (notices are few). A
 * plain smtp:// URL upgrades to TLS only when the server offers STARTTLS (mail catchers do not). The Message-ID
 * is the notice's id, so a receiver sees a retried notice as the same message.
 */
export function createEmailChannel({ smtpUrl, from, timeoutMs }: EmailChannelOptions): NoticeChannel {
  // The attempt is bounded by `within` below; nodemailer's own timeouts only end a connection the attempt has
  // already given up on. At the same value they raced `within`: nodemailer counts its connect and greeting
  // phases against a deadline taken just before `within` starts, so either could fire first, and a hanging
  // server's notice recorded "Greeting never received" or "no answer within" at random.
  const connectionBackstopMs = 2 * timeoutMs;
  const transport = createTransport({
    url: smtpUrl,
    connectionTimeout: connectionBackstopMs,
    greetingTimeout: connectionBackstopMs,
    socketTimeout: connectionBackstopMs,
  });
  const domain = from.address.slice(from.address.lastIndexOf('@') + 1);
  return {
    async deliver(message, notice) {
      const to = notice.consumer.contactEmail;
      if (to === null) throw new Error('the consumer has no contact_email');
      await within(
        timeoutMs,
        'SMTP',
        transport.sendMail({
          from,
          to,
          subject: subjectOf(message.data),
          text: textOf(message.data),
          messageId: `<${message.id}@${domain}>`,
          headers: { 'X-Notice-Type': message.type },
        }),
      );
    },
  };
}
