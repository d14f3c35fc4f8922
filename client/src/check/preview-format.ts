import type { Format } from './args.js';
import { changeText } from './findings.js';
import type { PreviewChange, UpgradePreviewAnswer } from './gateway.js';
import { cell, junitReport, plural, xml } from './report-text.js';

/**
 * `version-router-check --preview <n>` in its three formats: the verdict of moving the consumer's pin to n, each
 * call it made and each declared change or removed operation on the way that touches one of them; the changes that
 * touch none are counted, not listed (the whole preview is the gateway's `GET /consumer/upgrade-preview`).
 */

/** A change in words, with where it is and what of the consumer's it touches. */
function changeLine(change: PreviewChange): string {
  const sent = change.fields_sent.length === 0 ? '' : `; you sent ${change.fields_sent.join(', ')}`;
  const step = `v${change.version}→v${change.successor}`;
  return `${change.operation} (${step}): ${changeText(change)}${change.breaking ? ' [breaking]' : ''}${sent}`;
}

const touching = (preview: UpgradePreviewAnswer): PreviewChange[] => preview.changes.filter((change) => change.affects);

function verdictText(preview: UpgradePreviewAnswer): string {
  const target = `v${preview.to}`;
  switch (preview.verdict) {
    case 'safe':
      return `safe: no breaking change touches the calls ${preview.consumer} made`;
    case 'review':
      return `review: breaking changes touch the calls ${preview.consumer} made`;
    case 'blocked':
      return `blocked: ${preview.consumer} calls ${plural(preview.blocking.length, 'operation', 'operations')} ${target} does not have`;
  }
}

function text(preview: UpgradePreviewAnswer, url: string): string {
  const lines = [
    `version-router-check --preview ${preview.to}: consumer ${preview.consumer} at ${url}, from v${preview.from} to ` +
      `v${preview.to}, calls since ${preview.calls_since}`,
  ];
  for (const call of preview.calls)
    lines.push(
      `call ${call.call} (${plural(call.requests, 'request', 'requests')}, last ${call.last_seen})` +
        (call.instead === null ? '' : `: send ${call.instead}`),
    );
  for (const blocked of preview.blocking) lines.push(`BLOCKED ${blocked}: v${preview.to} does not have it`);
  for (const change of touching(preview)) lines.push(`${change.breaking ? 'CHANGE' : 'change'} ${changeLine(change)}`);
  const others = preview.changes.length - touching(preview).length;
  if (others > 0) lines.push(`${plural(others, 'other change', 'other changes')} on operations it did not call`);
  lines.push(`${preview.verdict.toUpperCase()}: ${verdictText(preview)}.`);
  return `${lines.join('\n')}\n`;
}

const ICONS = { safe: '✅', review: '⚠️', blocked: '❌' } as const;

function markdown(preview: UpgradePreviewAnswer, url: string): string {
  const lines = [
    `### ${ICONS[preview.verdict]} Moving to API v${preview.to}: ${verdictText(preview)}`,
    '',
    `Consumer \`${preview.consumer}\` on ${url}, from v${preview.from} to v${preview.to}, calls since ` +
      `${preview.calls_since}.`,
  ];
  for (const blocked of preview.blocking) lines.push('', `❌ \`${cell(blocked)}\`: v${preview.to} does not have it.`);
  const changes = touching(preview);
  if (changes.length > 0) {
    lines.push('', '| | Operation | Step | Change | Fields you sent |', '|---|---|---|---|---|');
    for (const change of changes)
      lines.push(
        `| ${change.breaking ? '⚠️' : 'ℹ️'} | \`${cell(change.operation)}\` | v${change.version}→v${change.successor} | ` +
          `${cell(changeText(change))}${change.breaking ? ' (breaking)' : ''} | ${cell(change.fields_sent.join(', '))} |`,
      );
  }
  const others = preview.changes.length - changes.length;
  if (others > 0) lines.push('', `${plural(others, 'other change', 'other changes')} on operations it did not call.`);
  return `${lines.join('\n')}\n`;
}

/** A JUnit report: a test case per call made, failed when the target lacks its operation. */
function junit(preview: UpgradePreviewAnswer): string {
  const blocked = new Set(preview.blocking);
  const cases = preview.calls.map((call) => {
    const head = `    <testcase classname="version-router.preview.v${preview.to}" name="${xml(call.call)}">`;
    const changes = touching(preview).filter((change) => change.calls.includes(call.call));
    const details = changes.map(changeLine).join('\n');
    if (blocked.has(call.call)) {
      const message = `v${preview.to} does not have ${call.call}`;
      return `${head}\n      <failure type="blocked" message="${xml(message)}">${xml(message)}</failure>\n    </testcase>`;
    }
    return details === ''
      ? `${head}\n    </testcase>`
      : `${head}\n      <system-out>${xml(details)}</system-out>\n    </testcase>`;
  });
  if (cases.length === 0)
    cases.push(
      `    <testcase classname="version-router.preview.v${preview.to}" name="${xml(
        `${preview.consumer} made no call of v${preview.from}`,
      )}"/>`,
    );
  const failures = preview.calls.filter((call) => blocked.has(call.call)).length;
  return junitReport({
    suite: `Moving ${preview.consumer} to API v${preview.to}: ${preview.verdict}`,
    tests: cases.length,
    failures,
    cases,
  });
}

export const formatPreview = (preview: UpgradePreviewAnswer, format: Format, url: string): string =>
  ({ text: () => text(preview, url), markdown: () => markdown(preview, url), junit: () => junit(preview) })[format]();
