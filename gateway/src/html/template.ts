/**
 * Markup rendered by the `html` tag (or `styleElement`): a template interpolates it as it is. Its private field
 * makes the type nominal and the class is not exported, so no other module can make one from a string: text
 * becomes markup only by passing through a template, escaped.
 */
class Html {
  readonly #markup: string;
  constructor(markup: string) {
    this.#markup = markup;
  }
  toString(): string {
    return this.#markup;
  }
}
export type { Html };

/** What a template takes: text and numbers (escaped), rendered markup (as it is) and lists of them (joined). */
export type Interpolation = string | number | Html | readonly Interpolation[];

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text as inert, visible text, in an element or a quoted attribute: control characters (C0, DEL, C1) become `\xNN`
 * so a terminal escape or a line break cannot hide in a name, then HTML's special characters become entities.
 */
const escapeText = (text: string): string =>
  text
    .replace(/\p{Cc}/gu, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] as string);

const isList = (value: Interpolation): value is readonly Interpolation[] => Array.isArray(value);

/** Anything but the template's own fragments and lists is text: an object that only looks like markup is escaped. */
const render = (value: Interpolation): string => {
  if (value instanceof Html) return value.toString();
  if (isList(value)) return value.map(render).join('');
  return escapeText(String(value));
};

/** html`<td>${name}</td>`: the template's own text as markup, every value escaped unless a template rendered it. */
export const html = (template: TemplateStringsArray, ...values: readonly Interpolation[]): Html =>
  new Html(String.raw({ raw: template }, ...values.map(render)));

/** The items one after the other, each as `html` takes it, one a line or with `separator` between them. */
export const join = (items: readonly Interpolation[], separator: Html = new Html('\n')): Html =>
  new Html(items.map(render).join(separator.toString()));

/**
 * A `<style>` element holding `css` as it is (a style element's text is not HTML: entities in it would not be
 * decoded). Only for style sheets from the repository; one that could end the element early is refused.
 */
export function styleElement(css: string): Html {
  if (/<\/style/i.test(css)) throw new Error('a style sheet must not contain "</style"');
  return new Html(`<style>${css}</style>`);
}
