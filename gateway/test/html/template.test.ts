import { describe, expect, it } from 'vitest';
import { html, join, styleElement } from '../../src/html/template.js';

describe('the html template', () => {
  it('escapes every interpolated text, in an element and in a quoted attribute', () => {
    const name = `"><img src=x onerror=alert(1)>`;
    expect(String(html`<td title="${name}">${name}</td>`)).toBe(
      '<td title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</td>',
    );
    expect(String(html`<p>${"<script>alert('x')</script> &amp;"}</p>`)).toBe(
      '<p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp;amp;</p>',
    );
  });

  it('shows control characters as \\xNN, so a line break or a terminal escape cannot hide in a name', () => {
    expect(String(html`<td>${'a\nb\u001b[2J\u0085\u007f'}</td>`)).toBe('<td>a\\x0ab\\x1b[2J\\x85\\x7f</td>');
  });

  it('keeps numbers and text without special characters as they are, unicode included', () => {
    expect(String(html`<td>${42}</td><td>${1.5}</td><td>${'Zoë → 日本 🦄'}</td>`)).toBe(
      '<td>42</td><td>1.5</td><td>Zoë → 日本 🦄</td>',
    );
  });

  it('takes a fragment another template rendered as it is, and escapes it only once', () => {
    const cell = html`<code>${'a<b'}</code>`;
    expect(String(html`<td>${cell}</td>`)).toBe('<td><code>a&lt;b</code></td>');
  });

  it('joins a list, escaping each text in it and taking each fragment as it is', () => {
    expect(String(html`<ul>${['<a>', html`<li>${'&'}</li>`, 7]}</ul>`)).toBe('<ul>&lt;a&gt;<li>&amp;</li>7</ul>');
    expect(String(html`<ul>${[]}</ul>`)).toBe('<ul></ul>');
  });

  it('keeps the template text as written: escape sequences, quotes and entities', () => {
    expect(String(html`<p>it's "quoted" &amp;\n</p>`)).toBe('<p>it\'s "quoted" &amp;\n</p>');
  });

  it('joins items one a line, or with the separator given', () => {
    expect(String(join([html`<li>1</li>`, '<2>']))).toBe('<li>1</li>\n&lt;2&gt;');
    expect(String(join(['a', 'b'], html`, `))).toBe('a, b');
    expect(String(join([]))).toBe('');
  });

  it('makes a style element of a style sheet as it is, and refuses one that could end the element', () => {
    expect(String(styleElement('body { font-family: "Segoe UI", sans-serif; }'))).toBe(
      '<style>body { font-family: "Segoe UI", sans-serif; }</style>',
    );
    expect(() => styleElement('p {}</STYLE><script>alert(1)</script>')).toThrow(
      'a style sheet must not contain "</style"',
    );
  });

  it('gives no way to make markup of a string: a look-alike object is escaped as text', () => {
    // The type check refuses this; at run time an object that is not the template's own is text, never markup.
    const forged = { toString: () => '<script>' } as unknown as string;
    expect(String(html`<p>${forged}</p>`)).toBe('<p>&lt;script&gt;</p>');
  });
});
