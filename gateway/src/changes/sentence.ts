import { html, join, type Html } from '../html/template.js';
import type { GuideChange } from './guide.js';

const code = (text: string): Html => html`<code>${text}</code>`;

/**
 * A declared change as a person reads it, in HTML: `renamed user_id → customer_id`, `converted total (decimal) →
 * total_cents (integer, × 100)`, `mapped status: active → enabled`, `moved customer_id → customer.id`, `status
 * changed 401 → 403`. The migration guide and the consumer's deprecation report say it alike; a change of error
 * answers says so.
 */
export function declaredSentence(change: GuideChange): Html {
  const said = sentence(change);
  return change.where === '' ? said : html`${said} (${change.where})`;
}

function sentence(change: GuideChange): Html {
  const name = code(change.name);
  switch (change.change) {
    case 'renamed':
    case 'moved':
    case 'status changed':
    case 'header renamed':
    case 'endpoint renamed':
      return html`${change.change} ${name} → ${code(change.to ?? '')}`;
    case 'wrapped':
      return html`wrapped in ${name}`;
    case 'links rewritten':
      return change.kind === 'header' ? html`links rewritten in the ${name} header` : html`links rewritten in ${name}`;
    case 'translated by module':
      return html`translated by module ${name}`;
    case 'converted': {
      const from = change.from_type === undefined ? '' : html` (${change.from_type})`;
      const to = html`${change.to_type === undefined ? '' : html`${change.to_type}, `}× ${change.factor ?? ''}`;
      return html`converted ${name}${from} → ${code(change.to ?? change.name)} (${to})`;
    }
    case 'mapped': {
      const pairs = Object.entries(change.values ?? {}).map(
        ([old, successor]) => html`${code(old)} → ${code(String(successor))}`,
      );
      return html`mapped ${name}: ${join(pairs, html`, `)}`;
    }
    default:
      return html`${change.change} ${name}`;
  }
}
