import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** The look every page shares (type, width, headings, notes, tables); each page adds its own rules after it. */
export const BASE_STYLE =
  `
:root { color-scheme: light; --line: #d8dde3; --muted: #5b6470; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1d2330; ` +
  `margin: 1.5rem auto; max-width: 72rem; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
p.meta, p.note, caption { color: var(--muted); font-size: .9rem; }
caption { text-align: left; padding-bottom: .35rem; }
table { border-collapse: collapse; width: 100%; }
`;

/**
 * What the gateway's pages for people share (the status page, the migration guide): each carries its
 * only style inline, allowed by its hash, loads nothing else and runs no script, so it works offline,
 * without JavaScript and behind a policy that forbids both.
 */
export function inlineStyleCsp(style: string): string {
  return [
    "default-src 'none'",
    `style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** An HTML answer under its page's CSP, never sniffed as anything else, and sending no referrer on. */
export function asPage(reply: FastifyReply, csp: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text from requests or documents as inert, visible text: control characters (C0, DEL, C1) become `\xNN`
 * so a terminal escape or a line break cannot hide in a name, then HTML's special characters become entities.
 */
export function escapeText(text: string): string {
  return text
    .replace(/\p{Cc}/gu, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] as string);
}
