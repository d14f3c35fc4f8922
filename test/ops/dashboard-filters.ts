/**
 * What an operator running several deployments expects of the Grafana dashboard: a datasource, a cluster and
 * a namespace to choose, and every query of every panel limited to that choice, so one Prometheus holding
 * staging and production (or several clusters) shows one deployment at a time instead of their sum.
 */
import { parser } from '@prometheus-io/lezer-promql';

/** The variables the dashboard offers, in order: which Prometheus, then which deployment in it. */
const DASHBOARD_VARIABLES = ['datasource', 'cluster', 'namespace'] as const;

/** The matchers every selector carries; `=~` so that an empty choice (no such label) selects series without it. */
const DEPLOYMENT_MATCHERS = ['cluster=~"$cluster"', 'namespace=~"$namespace"'] as const;

/** The datasource every panel and query names: the variable. */
const DATASOURCE_UID = '${datasource}';

interface Panel {
  title?: string;
  datasource?: { uid?: string };
  targets?: { expr?: string; refId?: string; datasource?: { uid?: string } }[];
  panels?: Panel[];
}

/** What this check reads of a dashboard. */
export interface Dashboard {
  panels?: Panel[];
  annotations?: { list?: { name?: string; expr?: string; datasource?: { uid?: string } }[] };
  templating?: { list?: { name: string; type: string; query?: unknown; datasource?: { uid?: string } }[] };
}

/**
 * Every vector selector of an expression (Grafana's interval variables replaced) that lacks one of DEPLOYMENT_MATCHERS.
 */
export function unfilteredSelectors(expr: string): string[] {
  const text = expr.replace(/\$__(?:rate_interval|interval|range)\b/g, '5m');
  const found: string[] = [];
  parser.parse(text).iterate({
    enter(ref) {
      if (ref.type.isError) {
        found.push(`syntax error at ${ref.from}`);
        return false;
      }
      if (ref.name !== 'VectorSelector') return undefined;
      const selector = text.slice(ref.from, ref.to);
      const matchers = (ref.node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []).map((node) =>
        text.slice(node.from, node.to).replace(/\s+/g, ''),
      );
      if (!DEPLOYMENT_MATCHERS.every((wanted) => matchers.includes(wanted))) found.push(selector);
      return false;
    },
  });
  return found;
}

/**
 * The dashboard has DASHBOARD_VARIABLES (a datasource variable, query variables on the chosen datasource), every
 * panel, target and annotation query asks the chosen datasource, and every selector of each carries
 * DEPLOYMENT_MATCHERS.
 */
export function dashboardFilterViolations(dashboard: Dashboard): string[] {
  const found: string[] = [];
  const variables = dashboard.templating?.list ?? [];
  const names = variables.map((variable) => variable.name);
  if (JSON.stringify(names) !== JSON.stringify(DASHBOARD_VARIABLES))
    found.push(`variables are ${JSON.stringify(names)}, not ${JSON.stringify(DASHBOARD_VARIABLES)}`);
  for (const variable of variables) {
    if (variable.name === 'datasource' && variable.type !== 'datasource')
      found.push(`variable datasource is of type ${variable.type}`);
    if (variable.name !== 'datasource' && variable.datasource?.uid !== DATASOURCE_UID)
      found.push(`variable ${variable.name} does not query the chosen datasource`);
  }
  const walk = (panels: Panel[] | undefined): void => {
    for (const panel of panels ?? []) {
      const at = `panel "${panel.title ?? '?'}"`;
      if (panel.datasource !== undefined && panel.datasource.uid !== DATASOURCE_UID)
        found.push(`${at}: datasource ${String(panel.datasource.uid)}, not ${DATASOURCE_UID}`);
      for (const target of panel.targets ?? []) {
        if (target.datasource?.uid !== DATASOURCE_UID)
          found.push(
            `${at} ${target.refId ?? '?'}: datasource ${String(target.datasource?.uid)}, not ${DATASOURCE_UID}`,
          );
        for (const selector of unfilteredSelectors(target.expr ?? ''))
          found.push(`${at} ${target.refId ?? '?'}: ${selector} is not filtered by cluster and namespace`);
      }
      walk(panel.panels);
    }
  };
  walk(dashboard.panels);
  for (const annotation of dashboard.annotations?.list ?? []) {
    if (annotation.expr === undefined) continue;
    const at = `annotation "${annotation.name ?? '?'}"`;
    if (annotation.datasource?.uid !== DATASOURCE_UID)
      found.push(`${at}: datasource ${String(annotation.datasource?.uid)}, not ${DATASOURCE_UID}`);
    for (const selector of unfilteredSelectors(annotation.expr))
      found.push(`${at}: ${selector} is not filtered by cluster and namespace`);
  }
  return found;
}

/** How many targets (queries) the dashboard's panels hold. */
export function targetCount(dashboard: Dashboard): number {
  const count = (panels: Panel[] | undefined): number =>
    (panels ?? []).reduce((sum, panel) => sum + (panel.targets ?? []).length + count(panel.panels), 0);
  return count(dashboard.panels);
}
