/**
 * MailDev's REST API (`GET /email`: every e-mail it caught, oldest first), for the container tests that
 * check what the stack sent: a message sent by hand now, the gateway's deprecation notices later.
 */
import { eventually } from '../../platform/test/support/eventually.mjs';

export interface MaildevAddress {
  address: string;
  name: string;
}

/** The fields of MailDev's e-mail JSON the tests read (MailDev 2.x `GET /email`). */
export interface MaildevEmail {
  id: string;
  /** When MailDev received it (ISO 8601). */
  time: string;
  subject: string;
  from: MaildevAddress[];
  to: MaildevAddress[];
  text?: string;
  html?: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The Message-ID header's value without its angle brackets. */
  messageId?: string;
}

/** Every e-mail MailDev holds; rejects unless it answers 200 with a JSON list. */
export async function maildevEmails(maildevUrl: string): Promise<MaildevEmail[]> {
  const response = await fetch(`${maildevUrl}/email`);
  const body: unknown = await response.json();
  if (response.status !== 200 || !Array.isArray(body))
    throw new Error(`MailDev GET /email: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
  return body as MaildevEmail[];
}

/** Polls MailDev until an e-mail `matches` (an SMTP server may store a message a moment after its 250). */
export function waitForEmail(
  maildevUrl: string,
  what: string,
  matches: (email: MaildevEmail) => boolean,
  timeoutMs = 30_000,
): Promise<MaildevEmail> {
  return eventually(`MailDev to hold ${what}`, async () => (await maildevEmails(maildevUrl)).find(matches), {
    timeoutMs,
    intervalMs: 500,
  });
}
