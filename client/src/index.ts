export { createFetch, type CreateFetchOptions, type VersionRouterFetch } from './create-fetch.js';
export { describeDeprecation, type DeprecationOptions, type DeprecationReport, type OnDeprecation } from './report.js';
