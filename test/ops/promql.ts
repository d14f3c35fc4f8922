/**
 * Reads the PromQL of ops/ (Grafana dashboards, Prometheus rules) and the metric names a
 * process exports, so tests can prove every query names a metric that exists.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { parser } from '@prometheus-io/lezer-promql';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../../scripts/paths.mjs';

/** lezer's SyntaxNode, named through the parser (so @lezer/common need not be a direct dependency). */
type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

export const rulesFile = `${repoRoot}ops/prometheus/rules.yml`;
const dashboardsDir = `${repoRoot}ops/grafana/dashboards`;

/** Where an expression came from, for failure messages. */
export interface SourcedExpr {
  source: string;
  expr: string;
}

/**
 * Grafana's built-in interval/range variables cannot be parsed as PromQL; they are replaced
 * by a representative duration (what Grafana itself does before sending the query).
 */
const GRAFANA_DURATION_VARIABLES =
  /\$(?:__rate_interval|__interval|__range)\b|\$\{(?:__rate_interval|__interval|__range)\}/g;

/** The dashboards' own variables, which stand inside label matchers' strings: replaced by a regex matching anything. */
const DASHBOARD_VARIABLES = /\$(?:cluster|namespace)\b/g;

export function substituteGrafanaVariables(expr: string): string {
  const substituted = expr.replace(GRAFANA_DURATION_VARIABLES, '5m').replace(DASHBOARD_VARIABLES, '.*');
  if (/\$(?:[A-Za-z_]\w*|\{[^}]*\})/.test(substituted))
    throw new Error(`unsupported Grafana variable in ${JSON.stringify(expr)}`);
  return substituted;
}

function unquote(literal: string): string {
  // PromQL strings: "..." or '...' with Go escapes, or `raw`.
  if (literal.startsWith('`')) return literal.slice(1, -1);
  const inner = literal.slice(1, -1);
  return inner.replace(/\\(.)/g, '$1');
}

/**
 * The metric names an expression selects. Throws on a syntax error, and on a selector whose
 * name cannot be known statically (a regex or negative `__name__` matcher), since such a
 * selector would escape the check.
 */
export function metricNamesIn(expr: string): string[] {
  const text = substituteGrafanaVariables(expr);
  const tree = parser.parse(text);
  const names = new Set<string>();
  const problems: string[] = [];
  const at = (node: SyntaxNode) => text.slice(node.from, node.to);
  tree.iterate({
    enter(ref) {
      if (ref.type.isError) {
        problems.push(
          `syntax error at offset ${ref.from}: ` +
            `${JSON.stringify(text.slice(Math.max(0, ref.from - 20), ref.from + 20))}`,
        );
        return false;
      }
      if (ref.name !== 'VectorSelector') return undefined;
      const selector = ref.node;
      const identifier = selector.getChild('Identifier');
      if (identifier) names.add(at(identifier));
      const matchers = selector.getChild('LabelMatchers');
      for (const child of matchers ? matchers.getChildren('QuotedLabelName') : []) {
        // {"utf8.metric.name"} form
        const literal = child.getChild('StringLiteral');
        if (literal) names.add(unquote(at(literal)));
      }
      for (const matcher of matchers ? matchers.getChildren('UnquotedLabelMatcher') : []) {
        const label = matcher.getChild('LabelName');
        if (!label || at(label) !== '__name__') continue;
        const op = matcher.getChild('MatchOp');
        const value = matcher.getChild('StringLiteral');
        if (op?.firstChild?.name !== 'EqlSingle' || !value) {
          problems.push(`cannot check a non-equality __name__ matcher: ${at(matcher)}`);
        } else {
          names.add(unquote(at(value)));
        }
      }
      return undefined;
    },
  });
  if (problems.length > 0) throw new Error(`${problems.join('; ')} in ${JSON.stringify(expr)}`);
  return [...names];
}

interface GrafanaPanel {
  title?: string;
  targets?: { expr?: string; refId?: string }[];
  panels?: GrafanaPanel[];
}

/** Every PromQL target of every panel (rows' nested panels included) of one dashboard JSON. */
export function dashboardExpressions(dashboard: GrafanaDashboard, file: string): SourcedExpr[] {
  const out: SourcedExpr[] = [];
  for (const annotation of dashboard.annotations?.list ?? []) {
    if (typeof annotation.expr === 'string')
      out.push({ source: `${file} › annotation "${annotation.name ?? '?'}"`, expr: annotation.expr });
  }
  const walk = (panels: GrafanaPanel[] | undefined) => {
    for (const panel of panels ?? []) {
      for (const target of panel.targets ?? []) {
        if (typeof target.expr === 'string' && target.expr.trim() !== '') {
          out.push({ source: `${file} › "${panel.title ?? '?'}" › ${target.refId ?? '?'}`, expr: target.expr });
        }
      }
      walk(panel.panels);
    }
  };
  walk(dashboard.panels);
  return out;
}

/** What these checks read of a Grafana dashboard: panels (nested in rows too) and annotation queries. */
interface GrafanaDashboard {
  title?: string;
  panels?: GrafanaPanel[];
  annotations?: { list?: { name?: string; expr?: string }[] };
}

export function loadDashboards(): { file: string; dashboard: GrafanaDashboard }[] {
  return readdirSync(dashboardsDir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => ({
      file: `ops/grafana/dashboards/${name}`,
      dashboard: JSON.parse(readFileSync(`${dashboardsDir}/${name}`, 'utf8')) as GrafanaDashboard,
    }));
}

interface RuleFile {
  groups: { name: string; rules: { record?: string; alert?: string; expr: string }[] }[];
}

/** Expressions and recording-rule names of a Prometheus rule file. */
export function ruleFileContents(
  yamlText: string,
  file: string,
): { expressions: SourcedExpr[]; recorded: Set<string> } {
  const parsed = parseYaml(yamlText) as RuleFile;
  const expressions: SourcedExpr[] = [];
  const recorded = new Set<string>();
  for (const group of parsed.groups) {
    for (const rule of group.rules) {
      if (rule.record) recorded.add(rule.record);
      expressions.push({
        source: `${file} › ${group.name} › ${rule.record ?? rule.alert ?? '?'}`,
        expr: String(rule.expr),
      });
    }
  }
  return { expressions, recorded };
}

export function loadRules(): { expressions: SourcedExpr[]; recorded: Set<string> } {
  return ruleFileContents(readFileSync(rulesFile, 'utf8'), 'ops/prometheus/rules.yml');
}

/**
 * The series names a Prometheus text exposition offers to queries: every sample's name, plus
 * the names implied by `# TYPE` (a histogram `x` is queried as x_bucket, x_sum, x_count; a
 * summary as x, x_sum, x_count), so a declared metric without samples yet still counts.
 */
export function exportedSeriesNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      const [, name = '', kind] = type;
      if (kind === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
      else if (kind === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(name + suffix);
      else names.add(name);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    if (sample?.[1]) names.add(sample[1]);
  }
  return names;
}

export interface UnknownMetric {
  source: string;
  metric: string;
}

/** Series Prometheus itself writes for every target it scrapes. */
const SCRAPE_SERIES = new Set(['up']);

/**
 * Metrics named by the expressions that are neither exported, written by Prometheus's scrapes, nor recorded by a rule.
 */
export function unknownMetrics(
  expressions: SourcedExpr[],
  exported: Set<string>,
  recorded: Set<string>,
): UnknownMetric[] {
  const unknown: UnknownMetric[] = [];
  for (const { source, expr } of expressions) {
    for (const metric of metricNamesIn(expr)) {
      if (!exported.has(metric) && !recorded.has(metric) && !SCRAPE_SERIES.has(metric))
        unknown.push({ source, metric });
    }
  }
  return unknown;
}
