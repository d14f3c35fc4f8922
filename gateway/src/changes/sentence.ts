import { escapeText } from '../html/self-contained.js';
import type { GuideChange } from './guide.js';

const code = (text: string): string => `<code>${escapeText(text)}</code>`;

/**
 * A declared change as a person reads it, in HTML: `renamed user_id → customer_id`, `converted total (decimal) →
 * total_cents (integer, × 100)`, `mapped status: active → enabled`. The migration guide and the consumer's
 * deprecation report say it alike.
 */
export function declaredSentence(change: GuideChange): string {
  const name = code(change.name);
  switch (change.change) {
    case 'renamed':
      return `renamed ${name} → ${code(change.to ?? '')}`;
    case 'converted': {
      const from = change.from_type === undefined ? '' : ` (${escapeText(change.from_type)})`;
      const to = `${change.to_type === undefined ? '' : `${escapeText(change.to_type)}, `}× ${change.factor ?? ''}`;
      return `converted ${name}${from} → ${code(change.to ?? change.name)} (${to})`;
    }
    case 'mapped': {
      const pairs = Object.entries(change.values ?? {}).map(
        ([old, successor]) => `${code(old)} → ${code(String(successor))}`,
      );
      return `mapped ${name}: ${pairs.join(', ')}`;
    }
    default:
      return `${change.change} ${name}`;
  }
}
