import type { Format } from './args.js';
import { fails, type CheckResult, type Finding } from './findings.js';

const inDays = (days: number): string =>
  days < 1 ? 'in less than a day' : days === 1 ? 'in 1 day' : `in ${days} days`;
const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** What is true of the operation now, in words: `sunsets 2027-01-01T00:00:00.000Z, in 40 days`. */
function statusText(finding: Finding): string {
  const sunset = finding.sunset.toISOString();
  switch (finding.status) {
    case 'removed':
      return `removed on ${sunset}: answered 410 Gone`;
    case 'browned-out':
      return (
        `browned out now, until ${finding.brownoutEnd?.toISOString()}: answered 410 Gone; sunsets ${sunset}, ` +
        `${inDays(finding.daysLeft)}`
      );
    case 'sunset-soon':
      return `sunsets ${sunset}, ${inDays(finding.daysLeft)}`;
    case 'deprecated':
      return `deprecated, sunsets ${sunset}, ${inDays(finding.daysLeft)}`;
  }
}

/** Where to go: what to send instead when the gateway says, the successor and its migration guide. */
function moveTo(finding: Finding): string {
  if (finding.successor === null) return `see ${finding.guide}`;
  const instead = finding.instead === null ? '' : `, send ${finding.instead}`;
  return `move to v${finding.successor}${instead}: ${finding.guide}`;
}

const verdict = (result: CheckResult): string =>
  result.failing === 0
    ? `nothing to change within ${plural(result.days, 'day', 'days')}`
    : `${plural(result.failing, 'operation', 'operations')} to change now`;

const criterion = (result: CheckResult): string =>
  `removed, browned out now or sunsets within ${plural(result.days, 'day', 'days')}`;

function text(result: CheckResult): string {
  const lines = [`version-router-check: consumer ${result.consumer} at ${result.url}, ${result.now.toISOString()}`];
  for (const finding of result.findings) {
    const head =
      `${fails(finding) ? 'FAIL' : 'ok  '} ${finding.call} (v${finding.version}, ` +
      `${plural(finding.requests, 'request', 'requests')})`;
    lines.push(`${head}: ${statusText(finding)}; ${moveTo(finding)}`);
    if (finding.breaking.length > 0) lines.push(`     breaking: ${finding.breaking.join('; ')}`);
  }
  if (result.findings.length === 0) lines.push(`OK: ${result.consumer} calls no deprecated or removed version.`);
  else if (result.failing === 0) lines.push(`OK: no operation ${result.consumer} called is ${criterion(result)}.`);
  else
    lines.push(
      `FAILED: ${plural(result.failing, 'operation', 'operations')} ${result.consumer} called ` +
        `${result.failing === 1 ? 'is' : 'are'} ${criterion(result)}.`,
    );
  return `${lines.join('\n')}\n`;
}

/** A table cell: a `|` would end it, a line break would end the table. */
const cell = (value: string): string => value.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

function markdown(result: CheckResult): string {
  const lines = [
    `### ${result.failing === 0 ? '✅' : '❌'} API deprecations: ${verdict(result)}`,
    '',
    `Consumer \`${result.consumer}\` on ${result.url}, checked ${result.now.toISOString()}. An operation fails the ` +
      `check when it is ${criterion(result)}.`,
  ];
  if (result.findings.length === 0) lines.push('', `\`${result.consumer}\` calls no deprecated or removed version.`);
  else {
    lines.push('', '| | Call | Version | Status | Move to | Breaking changes |', '|---|---|---|---|---|---|');
    for (const finding of result.findings) {
      const instead = finding.instead === null ? '' : `: \`${cell(finding.instead)}\``;
      const target =
        finding.successor === null
          ? `[migration guide](${finding.guide})`
          : `[v${finding.successor}](${finding.guide})${instead}`;
      const breaking = finding.breaking.length === 0 ? 'none' : finding.breaking.map(cell).join('<br>');
      lines.push(
        `| ${fails(finding) ? '❌' : '⚠️'} | \`${cell(finding.call)}\` | v${finding.version} | ` +
          `${cell(statusText(finding))} | ${target} | ${breaking} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

const xml = (value: string): string =>
  value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');

/** A JUnit XML report: a test case per call made, failed when it fails the check. */
function junit(result: CheckResult): string {
  const tests = Math.max(result.findings.length, 1);
  const cases = result.findings.map((finding) => {
    const head = `    <testcase classname="version-router.v${finding.version}" name="${xml(finding.call)}">`;
    const details = [
      `${finding.call} (v${finding.version}): ${statusText(finding)}`,
      moveTo(finding),
      ...finding.breaking.map((change) => `breaking: ${change}`),
    ].join('\n');
    if (!fails(finding)) return `${head}\n      <system-out>${xml(details)}</system-out>\n    </testcase>`;
    const failure = `<failure type="${xml(finding.status)}" message="${xml(statusText(finding))}">${xml(details)}</failure>`;
    return `${head}\n      ${failure}\n    </testcase>`;
  });
  // A report without a test case reads as a broken run in some CI systems: none called is one passed case.
  if (cases.length === 0)
    cases.push(
      `    <testcase classname="version-router" name="${xml(
        `${result.consumer} calls no deprecated or removed ` + `version`,
      )}"/>`,
    );
  const counts = `tests="${tests}" failures="${result.failing}" errors="0"`;
  const timestamp = result.now.toISOString();
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="version-router-check" ${counts}>`,
    `  <testsuite name="${xml(`API deprecations of ${result.consumer}`)}" ${counts} timestamp="${timestamp}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

export const formatResult = (result: CheckResult, format: Format): string =>
  ({ text, markdown, junit })[format](result);
