/** What the check's reports (its findings and an upgrade preview) share: counts in words, markdown cells, JUnit XML. */

export const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** A markdown table cell: a `|` would end it and a line break would end the row. */
export const cell = (value: string): string => value.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

export const xml = (value: string): string =>
  value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');

/** A JUnit document of one suite of `version-router-check`, its test cases already written. */
export function junitReport({
  suite,
  tests,
  failures,
  timestamp,
  cases,
}: {
  suite: string;
  tests: number;
  failures: number;
  timestamp?: Date;
  cases: string[];
}): string {
  const counts = `tests="${tests}" failures="${failures}" errors="0"`;
  const at = timestamp === undefined ? '' : ` timestamp="${timestamp.toISOString()}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="version-router-check" ${counts}>`,
    `  <testsuite name="${xml(suite)}" ${counts}${at}>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
