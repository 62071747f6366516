import type { ColumnType } from "kysely";
export type Generated<T> = T extends ColumnType<infer S, infer I, infer U>
  ? ColumnType<S, I | undefined, U>
  : ColumnType<T, T | undefined, T>;
export type Timestamp = ColumnType<Date, Date | string, Date | string>;

export type Activity = {
    tenant_id: string;
    seq: number;
    thread_id: string;
    log_index: number;
};
export type ActivityCounter = {
    tenant_id: string;
    seq: number;
};
export type ApiKey = {
    id: string;
    tenant_id: string;
    /**
     * Comma-separated scopes: read, write, approve, admin.
     */
    scopes: string;
    /**
     * SHA-256 (hex) of the whole key text.
     */
    key_hash: string;
    name: string | null;
    created_at: string;
    revoked_at: string | null;
};
export type Approval = {
    thread_id: string;
    run_id: string;
    requested_at: string;
    /**
     * The tenant of the run's thread (the store copies it from the thread row).
     */
    tenant_id: string;
    /**
     * pending | resolved | expired
     */
    state: string;
    waiting_for: string;
    /**
     * Canonical JSON shown to the approver (the run's pending_approval), if any.
     */
    prompt: string | null;
    expires_at: string | null;
    /**
     * Index of the log entry that made the request.
     */
    request_index: number;
    resolved_at: string | null;
    resolved_index: number | null;
    /**
     * The approver's decision (approved / rejected …) when resolved through resume.
     */
    decision: string | null;
    /**
     * Canonical JSON response given with the decision, if any.
     */
    response: string | null;
};
export type AuditEntry = {
    id: string;
    tenant_id: string;
    recorded_at: string;
    /**
     * The API key (or `system`) that asked.
     */
    actor: string;
    /**
     * `thread_deleted`.
     */
    action: string;
    thread_id: string;
    log_length: number;
    /**
     * verification.stateHash of the thread's last entry.
     */
    state_hash: string;
};
export type IdempotencyRecord = {
    scope: string;
    key: string;
    request_hash: string;
    /**
     * Canonical JSON response.
     */
    response: string;
    thread_id: string | null;
    created_at: string;
};
export type LogEntry = {
    thread_id: string;
    log_index: number;
    entry_id: string;
    type: string;
    recorded_at: string;
    /**
     * The canonical entry text exactly as written; empty when the entry is stored `packed`.
     */
    entry: string;
    /**
     * The entry stored compactly (read it through the store, never directly): the canonical text
     * without the payloads of the nodes the entry created (they are in `node.payload`), deflated,
     * with where each payload goes. The store reads it back byte-identical. Null when `entry`
     * holds the text.
     */
    packed: Buffer | null;
    /**
     * The entry's JSON text as it was appended (`JSON.stringify` of the caller's value: its key
     * order), which the event-log store reads back. Null when it is the canonical text, as for
     * every entry the engine writes. Hashes stay over the canonical text in `entry` / `packed`.
     */
    verbatim: string | null;
};
export type Node = {
    thread_id: string;
    id: string;
    /**
     * 1-based, contiguous per thread.
     */
    sequence: number;
    kind: string;
    /**
     * Canonical JSON payload.
     */
    payload: string;
    created_at: string;
    resource_key: string | null;
    /**
     * Index of the log entry that created the node.
     */
    log_index: number;
    run_id: string | null;
    /**
     * Canonical JSON taint record.
     */
    taint: string | null;
    /**
     * Canonical JSON usage record.
     */
    usage: string | null;
    is_frontier: number;
    is_current: number;
};
export type NodeParent = {
    thread_id: string;
    child_seq: number;
    parent_seq: number;
    position: number;
};
export type NodeText = {
    /**
     * A stable rowid (INTEGER PRIMARY KEY on SQLite): the FTS5 index names rows by it.
     */
    id: Generated<number>;
    thread_id: string;
    sequence: number;
    kind: string;
    body: string;
};
export type ResourceHead = {
    thread_id: string;
    resource_key: string;
    node_id: string;
    semantic_type: string | null;
    semantic_key: string | null;
};
export type Run = {
    thread_id: string;
    id: string;
    /**
     * The tenant of the run's thread (the store copies it from the thread row).
     */
    tenant_id: string;
    status: string;
    goal: string;
    created_at: string;
    updated_at: string;
    started_at: string | null;
    waiting_timeout_at: string | null;
    execution_deadline_at: string | null;
    /**
     * Canonical JSON WorkflowState.
     */
    state: string;
    total_input_tokens: Generated<number>;
    total_output_tokens: Generated<number>;
    total_cost_usd: Generated<number>;
    /**
     * Index of the last log entry that touched the run.
     */
    log_index: number;
    /**
     * What a waiting run waits for (`human_approval`, `external_event`, …); null unless waiting.
     */
    waiting_for: string | null;
};
export type RunSpend = {
    thread_id: string;
    run_id: string;
    dimension: string;
    key: string;
    input_tokens: Generated<number>;
    output_tokens: Generated<number>;
    cost_usd: Generated<number>;
    calls: Generated<number>;
};
export type Setting = {
    key: string;
    value: string;
};
export type Snapshot = {
    thread_id: string;
    log_index: number;
    /**
     * verification.stateHash of entry index - 1: checked against the log before use.
     */
    state_hash: string;
    /**
     * SHA-256 (hex) of `state`.
     */
    checksum: string;
    /**
     * Canonical JSON snapshot text.
     */
    state: string;
    created_at: string;
};
export type Thread = {
    id: string;
    tenant_id: Generated<string>;
    created_at: string;
    updated_at: string;
    /**
     * Canonical JSON object.
     */
    metadata: string;
    /**
     * Canonical JSON: the configured semantic node-type vocabulary.
     */
    node_types: string;
    allow_dynamic_node_types: Generated<number>;
    /**
     * Number of log entries; the next entry's index. Optimistic-concurrency token.
     */
    log_length: Generated<number>;
    /**
     * verification.stateHash of the last entry.
     */
    state_hash: string;
    /**
     * Canonical JSON array of node ids.
     */
    frontier: Generated<string>;
    forked_from_id: string | null;
    forked_up_to_index: number | null;
    /**
     * Shared history (a fork): the thread whose rows hold this thread's entries
     * [0, base_log_length) and nodes 1..base_node_count; null when every row is its own.
     */
    base_thread_id: string | null;
    base_log_length: number | null;
    base_node_count: number | null;
    /**
     * Deleted, its rows kept while forks read its history (read-model/removal.ts); null: live.
     */
    deleted_at: string | null;
    /**
     * Retention: when the sweeper deletes the thread (src/engine/retention.ts); null: never. Not
     * part of the log: set at creation (or by WEFT_RETENTION_DAYS) and by setThreadExpiry.
     */
    expires_at: string | null;
    /**
     * Number of nodes in the causal graph, kept with each commit (a count without a scan).
     */
    node_count: Generated<number>;
    /**
     * The thread's spend as of log_length; null on rows last written before these columns.
     */
    spend_input_tokens: number | null;
    spend_output_tokens: number | null;
    spend_cost_usd: number | null;
    spend_calls: number | null;
    /**
     * createThread's saltPayloads: the thread's 32-byte secret (hex) the engine keys each new
     * node's `weft:salt` payload field with (src/engine/payload-salts.ts); sealed like metadata
     * under WEFT_ENCRYPTION_KEY; null: payloads are stored as sent. Written at creation only.
     */
    payload_salt: string | null;
};
export type ThreadKey = {
    thread_id: string;
    /**
     * `wkey1:` + base64(iv ‖ tag ‖ sealed data key).
     */
    wrapped: string;
    created_at: string;
};
export type DB = {
    activity: Activity;
    activity_counter: ActivityCounter;
    api_key: ApiKey;
    approval: Approval;
    audit_entry: AuditEntry;
    idempotency_record: IdempotencyRecord;
    log_entry: LogEntry;
    node: Node;
    node_parent: NodeParent;
    node_text: NodeText;
    resource_head: ResourceHead;
    run: Run;
    run_spend: RunSpend;
    snapshot: Snapshot;
    thread: Thread;
    thread_key: ThreadKey;
    weft_setting: Setting;
};
