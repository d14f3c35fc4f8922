/** The quality a media range gets in Accept (0 when absent); `type` is matched exactly. */
function qualityOf(accept: string, type: string): number {
  let best = 0;
  for (const range of accept.split(',')) {
    const [name, ...parameters] = range.split(';');
    if (name?.trim().toLowerCase() !== type) continue;
    const q = parameters
      .map((parameter) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(parameter)?.[1])
      .find((value) => value !== undefined);
    best = Math.max(best, q === undefined ? 1 : Number(q) || 0);
  }
  return best;
}

/**
 * Whether a route that answers JSON or a page for people answers the page: only to a client that asks for
 * text/html by name and prefers it to JSON. Browsers do; `*\/*` gets JSON.
 */
export function wantsHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const html = qualityOf(accept, 'text/html');
  return html > 0 && html > qualityOf(accept, 'application/json');
}
