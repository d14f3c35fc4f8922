import { request } from 'undici';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '@version-router/platform/clock';
import { within, type NoticeChannel } from './channel.js';

export interface WebhookChannelOptions {
  /** NOTICES_SEND_TIMEOUT_MS: the longest one delivery may take. */
  timeoutMs: number;
  clock: Clock;
}

/**
 * Notices as a POST to the consumer's webhook URL, signed as Standard Webhooks sign (the reference
 * implementation, npm `standardwebhooks`): `webhook-id` is the notice's id on every attempt, `webhook-timestamp`
 * the attempt's own time (receivers refuse old ones), the signature covers `id.timestamp.body` with the
 * consumer's secret. Any 2xx is delivered; anything else, or no answer in time, is retried. Redirects are not
 * followed; the answer's body is discarded.
 */
export function createWebhookChannel({ timeoutMs, clock }: WebhookChannelOptions): NoticeChannel {
  return {
    async deliver(message, notice) {
      const { webhookUrl, webhookSecret } = notice.consumer;
      if (webhookUrl === null || webhookSecret === null) throw new Error('the consumer has no webhook_url');
      const body = JSON.stringify({ type: message.type, data: message.data });
      const sentAt = new Date(clock());
      const headers = {
        'content-type': 'application/json',
        'webhook-id': message.id,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': new Webhook(webhookSecret).sign(message.id, sentAt, body),
      };
      const signal = AbortSignal.timeout(timeoutMs);
      const answer = await within(
        timeoutMs,
        'webhook',
        request(webhookUrl, {
          method: 'POST',
          headers,
          body,
          signal,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        }),
      );
      await answer.body.dump({ limit: 65_536, signal });
      if (answer.statusCode < 200 || answer.statusCode > 299) throw new Error(`webhook answered ${answer.statusCode}`);
    },
  };
}
