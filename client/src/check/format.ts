import type { Format } from './args.js';
import { fails, type CheckResult, type Finding, type PinProblem } from './findings.js';
import { cell, junitReport, plural, xml } from './report-text.js';

const inDays = (days: number): string =>
  days < 1 ? 'in less than a day' : days === 1 ? 'in 1 day' : `in ${days} days`;

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
    case 'brownout-soon': {
      const next = finding.nextBrownout;
      const window =
        next === null ? 'soon' : `${next.start.toISOString()} to ${next.end.toISOString()}, ${inDays(next.daysLeft)}`;
      return `browned out ${window}: answered 410 Gone then; sunsets ${sunset}, ${inDays(finding.daysLeft)}`;
    }
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

/** What a request that names no version gets from the pin's version, now or soon. */
function pinWhat(pin: PinProblem): string {
  const removed = pin.removedOn === null ? '' : pin.removedOn.toISOString();
  const window =
    pin.brownout === null ? '' : `${pin.brownout.start.toISOString()} to ${pin.brownout.end.toISOString()}`;
  switch (pin.problem) {
    case 'unlisted':
      return (
        `pinned to v${pin.version}, which the gateway no longer lists: a request that names no version is answered ` +
        `406 Not Acceptable`
      );
    case 'removed':
      return `pinned to v${pin.version}, removed${removed === '' ? '' : ` on ${removed}`}: a request that names no version is answered 410 Gone`;
    case 'browned-out':
      return `pinned to v${pin.version}, browned out now (${window}): a request that names no version is answered 410 Gone`;
    case 'brownout-soon':
      return `pinned to v${pin.version}, browned out ${window}: a request that names no version is answered 410 Gone then`;
    case 'sunset-soon':
      return `pinned to v${pin.version}, which sunsets ${removed}: a request that names no version is answered 410 Gone from then`;
  }
}

/** The pin's problem in words: what a request that names no version gets, and what may be pinned instead. */
function pinText(pin: PinProblem): string {
  const what = pinWhat(pin);
  const choices = pin.pinnable.map((version) => `v${version}`).join(', ');
  return `${what}; pin ${choices === '' ? 'another version' : `one of ${choices}`} (PUT /consumer/version)`;
}

/** Operations that fail the check (the pin is counted apart). */
const failingOperations = (result: CheckResult): number => result.failing - (result.pin === null ? 0 : 1);

function verdict(result: CheckResult): string {
  if (result.failing === 0) return `nothing to change within ${plural(result.days, 'day', 'days')}`;
  const operations = failingOperations(result);
  const parts = operations === 0 ? [] : [plural(operations, 'operation', 'operations')];
  if (result.pin !== null) parts.push('the pin');
  return `${parts.join(' and ')} to change now`;
}

const criterion = (result: CheckResult): string =>
  `removed, browned out now, or sunsets or is browned out within ${plural(result.days, 'day', 'days')}`;

/** Since when the calls were counted, as the gateway said (older gateways do not say). */
const sinceText = (result: CheckResult): string =>
  result.since === null ? '' : `, calls since ${result.since.toISOString()}`;

/** A version the consumer is done with, in words: `v1: acme made no call of it since …`. */
function doneText(result: CheckResult, done: CheckResult['done'][number]): string {
  const since = result.since === null ? '' : ` since ${result.since.toISOString()}`;
  return (
    `v${done.version}: ${result.consumer} made no call of it${since}, and its requests that name no version get ` +
    `another version`
  );
}

/** The pin's verdict line: it serves no request now, or will not soon. */
const pinFailed = (result: CheckResult, pin: PinProblem): string =>
  pin.problem === 'unlisted' || pin.problem === 'removed' || pin.problem === 'browned-out'
    ? `FAILED: ${result.consumer} is pinned to a version that serves no request.`
    : `FAILED: ${result.consumer} is pinned to a version that stops serving requests within ` +
      `${plural(result.days, 'day', 'days')} (a brownout or its sunset).`;

function text(result: CheckResult): string {
  const lines = [
    `version-router-check: consumer ${result.consumer} at ${result.url}, ${result.now.toISOString()}${sinceText(result)}`,
  ];
  if (result.pin !== null) lines.push(`FAIL ${pinText(result.pin)}`);
  for (const done of result.done) lines.push(`done ${doneText(result, done)}`);
  for (const finding of result.findings) {
    const head =
      `${fails(finding) ? 'FAIL' : 'ok  '} ${finding.call} (v${finding.version}, ` +
      `${plural(finding.requests, 'request', 'requests')})`;
    lines.push(`${head}: ${statusText(finding)}; ${moveTo(finding)}`);
    if (finding.breaking.length > 0) lines.push(`     breaking: ${finding.breaking.join('; ')}`);
  }
  const operations = failingOperations(result);
  if (result.pin !== null) lines.push(pinFailed(result, result.pin));
  if (operations > 0)
    lines.push(
      `FAILED: ${plural(operations, 'operation', 'operations')} ${result.consumer} called ` +
        `${operations === 1 ? 'is' : 'are'} ${criterion(result)}.`,
    );
  if (result.failing === 0)
    lines.push(
      result.findings.length === 0
        ? `OK: ${result.consumer} calls no deprecated or removed version.`
        : `OK: no operation ${result.consumer} called is ${criterion(result)}.`,
    );
  return `${lines.join('\n')}\n`;
}

/** A table cell: a `|` would end it, a line break would end the table. */

function markdown(result: CheckResult): string {
  const lines = [
    `### ${result.failing === 0 ? '✅' : '❌'} API deprecations: ${verdict(result)}`,
    '',
    `Consumer \`${result.consumer}\` on ${result.url}, checked ${result.now.toISOString()}${sinceText(result)}. An ` +
      `operation fails the check when it is ${criterion(result)}.`,
  ];
  if (result.pin !== null) lines.push('', `❌ Pin: ${cell(pinText(result.pin))}`);
  for (const done of result.done) lines.push('', `✅ Done with ${cell(doneText(result, done))}`);
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

/** A JUnit XML report: a test case per call made, failed when it fails the check. */
function junit(result: CheckResult): string {
  const tests = Math.max(result.findings.length + result.done.length + (result.pin === null ? 0 : 1), 1);
  const pin = result.pin;
  const pinCase =
    pin === null
      ? []
      : [
          `    <testcase classname="version-router.pin" name="pinned to v${pin.version}">\n      <failure ` +
            `type="pin-${pin.problem}" message="${xml(pinText(pin))}">${xml(pinText(pin))}</failure>\n    </testcase>`,
        ];
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
  const doneCases = result.done.map(
    (done) =>
      `    <testcase classname="version-router.v${done.version}" name="done with v${done.version}">\n      ` +
      `<system-out>${xml(`done with ${doneText(result, done)}`)}</system-out>\n    </testcase>`,
  );
  cases.unshift(...pinCase, ...doneCases);
  // A report without a test case reads as a broken run in some CI systems: none called is one passed case.
  if (cases.length === 0)
    cases.push(
      `    <testcase classname="version-router" name="${xml(
        `${result.consumer} calls no deprecated or removed ` + `version`,
      )}"/>`,
    );
  return junitReport({
    suite: `API deprecations of ${result.consumer}`,
    tests,
    failures: result.failing,
    timestamp: result.now,
    cases,
  });
}

export const formatResult = (result: CheckResult, format: Format): string =>
  ({ text, markdown, junit })[format](result);
