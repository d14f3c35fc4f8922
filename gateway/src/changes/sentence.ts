import { html, join, type Html } from '../html/template.js';
import { plainDescription, type GuideChange } from './guide.js';

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

/**
 * A change as plain text naming its fields, for the notices' e-mails and webhooks: `user_id is now customer_id`,
 * `total is now total_cents (x100)`, `status: "active" is now "enabled"`, `status 401 is now 403` (a change of error
 * answers says so: `… in error responses`); a change found between the documents
 * as the guide lists it (`removed field legacy in response 200 (application/json)`). The declaration's description
 * is said beside it, never instead (`withDescription`).
 */
export function changeText(change: GuideChange): string {
  const where = change.where === '' ? '' : ` in ${change.where}`;
  if (change.declared !== true)
    return [change.change, change.kind, change.name].filter((part) => part !== '').join(' ') + where;
  switch (change.change) {
    case 'renamed':
      return `${change.name} is now ${change.to ?? change.name}${where}`;
    case 'converted':
      return `${change.name} is now ${change.to ?? change.name} (x${change.factor ?? 1})${where}`;
    case 'mapped': {
      const pairs = Object.entries(change.values ?? {}).map(
        ([old, successor]) => `${JSON.stringify(old)} is now ${JSON.stringify(successor)}`,
      );
      return `${change.name}: ${pairs.join(', ')}${where}`;
    }
    case 'added':
      return `${change.name} is new${where}`;
    case 'removed':
      return `${change.name} is gone${where}`;
    case 'moved':
      return `${change.name} is now ${change.to ?? change.name}${where}`;
    case 'wrapped':
      return `the body is now inside ${change.name}${where}`;
    case 'status changed':
      return `status ${change.name} is now ${change.to ?? change.name}`;
    case 'header renamed':
      return `header ${change.name} is now ${change.to ?? change.name}`;
    case 'endpoint renamed':
      return `${change.name} is now ${change.to ?? change.name}`;
    case 'links rewritten':
      return change.kind === 'header'
        ? `the Link header names the successor's paths`
        : `${change.name} names the successor's paths${where}`;
    case 'translated by module':
      return `the bodies are translated by ${change.name}`;
    default:
      return `${change.name} changed${where}`;
  }
}

/** `changeText`, and after it the description its declaration gives (none for one it does not, or a found change). */
export function withDescription(change: GuideChange): string {
  const text = changeText(change);
  const own = change.declared === true && change.description !== plainDescription(change);
  return own ? `${text}: ${change.description}` : text;
}
