/**
 * The translation's limits when the environment sets none (docs/configuration.md): TRANSLATION_MAX_BYTES, the largest
 * body read whole to be translated, and TRANSLATION_MAX_DEPTH, the deepest nesting translated. Kept here, where the
 * engine and a module's results are held to them; config.ts reads the environment against them.
 */
export const DEFAULT_TRANSLATION_MAX_BYTES = 1024 * 1024;
export const DEFAULT_TRANSLATION_MAX_DEPTH = 64;
