/**
 * What an operator running several deployments expects of the Prometheus rules (ops/prometheus/rules.yml,
 * shipped as the PrometheusRule of deploy/kubernetes/monitoring), one function per rule returning what is
 * wrong, so test/kubernetes/alert-rules.test.ts can see each fail on a broken rule.
 */
import { parser } from '@prometheus-io/lezer-promql';

/** lezer's SyntaxNode, named through the parser (so @lezer/common need not be a direct dependency). */
type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

/** The labels that tell one deployment from another when one Prometheus watches several. */
const DEPLOYMENT_LABELS = ['namespace', 'cluster'] as const;

/** Aggregations that pick series rather than combine them: they keep every label. */
const SELECTING_AGGREGATIONS = new Set(['topk', 'bottomk', 'limitk', 'limit_ratio']);

/** A rule as the rule file holds it. */
export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  annotations?: Record<string, string>;
}

/**
 * Where an expression drops a deployment label, so that series of staging and production (or of two
 * clusters) would be summed, compared or matched together: an aggregation that does not group by it (or
 * groups `without` it), a vector match `on (…)` that leaves it out (or `ignoring` it), a `vector()`, which
 * has no labels at all. A syntax error is reported too.
 */
export function droppedDeploymentLabels(expr: string): string[] {
  const tree = parser.parse(expr);
  const found: string[] = [];
  const text = (node: { from: number; to: number }): string => expr.slice(node.from, node.to);
  const missing = (labels: string[]): string[] => DEPLOYMENT_LABELS.filter((label) => !labels.includes(label));
  const kept = (labels: string[]): string[] => DEPLOYMENT_LABELS.filter((label) => labels.includes(label));
  tree.iterate({
    enter(ref) {
      if (ref.type.isError) {
        found.push(
          `syntax error at ${ref.from}: ${JSON.stringify(expr.slice(Math.max(0, ref.from - 20), ref.from + 20))}`,
        );
        return false;
      }
      const node = ref.node;
      const grouping = (clause: typeof node): string[] =>
        (clause.getChild('GroupingLabels')?.getChildren('LabelName') ?? []).map(text);
      if (ref.name === 'AggregateExpr') {
        const operation = text(node.getChild('AggregateOp') ?? node);
        if (SELECTING_AGGREGATIONS.has(operation)) return undefined;
        const modifier = node.getChild('AggregateModifier');
        const where = modifier === null ? `${operation}(…)` : `${operation} ${text(modifier)}`;
        const dropped =
          modifier === null
            ? [...DEPLOYMENT_LABELS]
            : modifier.getChild('Without') !== null
              ? kept(grouping(modifier))
              : missing(grouping(modifier));
        if (dropped.length > 0) found.push(`${where} drops ${dropped.join(', ')}`);
      } else if (ref.name === 'MatchingModifierClause') {
        const dropped = node.getChild('Ignoring') !== null ? kept(grouping(node)) : missing(grouping(node));
        if (dropped.length > 0) found.push(`${text(node)} matches without ${dropped.join(', ')}`);
      } else if (ref.name === 'FunctionCall' && text(node.getChild('FunctionIdentifier') ?? node) === 'vector') {
        found.push(`${text(node)} has no ${DEPLOYMENT_LABELS.join(', ')}`);
      }
      return undefined;
    },
  });
  return found;
}

/** Every aggregation of every rule keeps the deployment labels (droppedDeploymentLabels). */
export function deploymentLabelViolations(rules: Rule[]): string[] {
  return rules.flatMap((rule) =>
    droppedDeploymentLabels(rule.expr).map((problem) => `${rule.alert ?? rule.record}: ${problem}`),
  );
}

/** Where the runbooks are: one page, a section per alert titled with the alert's name. */
export interface Runbooks {
  /** What every runbook_url starts with: the page's URL up to the `#`. */
  pageUrl: string;
  /** The page's Markdown. */
  page: string;
}

/**
 * Each alert has a runbook_url: the runbooks page's URL and the anchor of the page's section named after
 * the alert (`## AlertName`, whose anchor is the name in lower case).
 */
export function runbookViolations(rules: Rule[], { pageUrl, page }: Runbooks): string[] {
  const headings = new Set(
    page
      .split('\n')
      .filter((line) => line.startsWith('## '))
      .map((line) => line.slice(3).trim()),
  );
  const found: string[] = [];
  for (const { alert, annotations } of rules) {
    if (alert === undefined) continue;
    const expected = `${pageUrl}#${alert.toLowerCase()}`;
    const url = annotations?.runbook_url;
    if (url === undefined) found.push(`${alert}: no runbook_url`);
    else if (url !== expected) found.push(`${alert}: runbook_url is ${url}, not ${expected}`);
    if (!headings.has(alert)) found.push(`${alert}: the runbooks have no section "## ${alert}"`);
  }
  return found;
}

/**
 * No annotation sends the reader to docker compose: the same alerts fire on Kubernetes, where an operator
 * has no compose file. Commands for each setting belong in the runbook.
 */
export function composeInstructionViolations(rules: Rule[]): string[] {
  return rules.flatMap(({ alert, record, annotations }) =>
    Object.entries(annotations ?? {})
      .filter(([, text]) => /docker|compose/i.test(text))
      .map(([name]) => `${alert ?? record}: its ${name} tells the reader to use docker compose`),
  );
}

/** The text of each `name="value"` matcher of a vector selector, by label name (`=` matchers only). */
function equalMatchers(expr: string, selector: SyntaxNode): Map<string, string> {
  const found = new Map<string, string>();
  for (const matcher of selector.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []) {
    const name = matcher.getChild('LabelName');
    const op = matcher.getChild('MatchOp');
    const value = matcher.getChild('StringLiteral');
    if (name === null || op === null || value === null || op.getChild('EqlSingle') === null) continue;
    found.set(expr.slice(name.from, name.to), expr.slice(value.from + 1, value.to - 1));
  }
  return found;
}

/** Each vector selector of an expression: its metric name and its `=` matchers. */
function selectorsOf(
  expr: string,
): { text: string; metric: string; matchers: Map<string, string>; node: SyntaxNode }[] {
  const found: { text: string; metric: string; matchers: Map<string, string>; node: SyntaxNode }[] = [];
  parser.parse(expr).iterate({
    enter(ref) {
      if (ref.name !== 'VectorSelector') return undefined;
      const identifier = ref.node.getChild('Identifier');
      found.push({
        text: expr.slice(ref.from, ref.to),
        metric: identifier === null ? '' : expr.slice(identifier.from, identifier.to),
        matchers: equalMatchers(expr, ref.node),
        node: ref.node,
      });
      return false;
    },
  });
  return found;
}

/**
 * Every selector of a raw metric names one of our scrape jobs (`jobs`: `job="version-router-gateway"`, …): a
 * Prometheus shared with other applications holds their `backend_up`, `db_up` or `http_requests_total` too, and their
 * own jobs, which may well be called `gateway` or `backend`; a rule must judge none of them. Recorded series (a name
 * with a colon) carry what their own rule selected.
 */
export function jobSelectorViolations(rules: Rule[], jobs: readonly string[]): string[] {
  return rules.flatMap((rule) =>
    selectorsOf(rule.expr)
      .filter(({ metric }) => !metric.includes(':'))
      .flatMap(({ text, matchers }) => {
        const job = matchers.get('job');
        if (job === undefined) return [`${rule.alert ?? rule.record}: ${text} selects no job`];
        return jobs.includes(job)
          ? []
          : [`${rule.alert ?? rule.record}: ${text} selects the job ${job}, not one of ours (${jobs.join(', ')})`];
      }),
  );
}

/**
 * Each scrape job has an alert on its absence, `absent(up{job="<job>"} …)`: every other alert of a job needs its
 * metrics, so a job Prometheus does not scrape (or whose every target is down) would otherwise pass for healthy.
 */
export function absentJobViolations(rules: Rule[], jobs: string[]): string[] {
  const watched = new Set<string>();
  for (const { alert, expr } of rules) {
    if (alert === undefined) continue;
    parser.parse(expr).iterate({
      enter(ref) {
        if (ref.name !== 'FunctionCall' || expr.slice(ref.from, ref.to).split('(', 1)[0]?.trim() !== 'absent')
          return undefined;
        const body = ref.node.getChild('FunctionCallBody');
        if (body === null) return false;
        for (const { metric, matchers } of selectorsOf(expr.slice(body.from, body.to))) {
          const job = matchers.get('job');
          if (metric === 'up' && job !== undefined) watched.add(job);
        }
        return false;
      },
    });
  }
  return jobs.filter((job) => !watched.has(job)).map((job) => `no alert on absent(up{job="${job}"})`);
}
