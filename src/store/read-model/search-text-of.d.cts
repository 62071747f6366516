/** Types of search-text-of.cjs (plain CommonJS, shared with the SQLite search thread). */
export declare const MAX_SEARCH_TEXT: number;
export declare function textOfValue(parsed: unknown): string;
export declare function textOfRow(body: unknown, payload: unknown): string;
