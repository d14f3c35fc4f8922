import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyReply } from 'fastify';
import { styleElement, type Html } from './template.js';

/** The look every page shares (type, width, headings, notes, tables); each page's own file adds its rules after it. */
const BASE_CSS = new URL('./base.css', import.meta.url);

/**
 * What the gateway's pages for people share (the status page, the migration guide, the deprecation report): each
 * carries its only style inline, allowed by its hash, loads nothing else and runs no script, so it works offline,
 * without JavaScript and behind a policy that forbids both.
 */
function inlineStyleCsp(style: string): string {
  return [
    "default-src 'none'",
    `style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export interface PageStyle {
  /** The page's `<style>` element: the shared look, then the page's own rules. */
  readonly element: Html;
  /** The page's Content-Security-Policy, which allows that style by its hash and nothing else. */
  readonly csp: string;
}

/**
 * A page's style: the shared look and the page's own CSS file (beside its module; the build copies it into dist/),
 * read once, when the page's module loads.
 */
export function pageStyle(file: URL): PageStyle {
  const css = [BASE_CSS, file].map((path) => readFileSync(path, 'utf8')).join('');
  return { element: styleElement(css), csp: inlineStyleCsp(css) };
}

/** An HTML answer under its page's CSP, never sniffed as anything else, and sending no referrer on. */
export function asPage(reply: FastifyReply, csp: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}
