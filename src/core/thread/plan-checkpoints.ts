/**
 * Planning of checkpoint entries (see CheckpointSavedEvent): the saver's record is kept as
 * given; its nodes are resolved like appendNodes' (ids, parents), so replay recomputes nothing.
 */
import { ok, type Result } from '../errors.js';
import type { JsonObject } from '../json.js';
import type { CheckpointSavedEvent, CheckpointWritesSavedEvent, RecordedNode } from './events.js';
import { type NodeInput, planAppendNodes } from './plan-nodes.js';
import type { ThreadState } from './state.js';

export interface CheckpointInput {
  checkpointId: string;
  parentCheckpointId?: string;
  data: JsonObject;
  nodes?: readonly NodeInput[];
}

export interface CheckpointWritesInput {
  checkpointId: string;
  taskId: string;
  data: JsonObject;
  nodes?: readonly NodeInput[];
}

function planNodes(
  state: ThreadState,
  nodes: readonly NodeInput[] | undefined,
  now: string,
): Result<RecordedNode[]> {
  if (nodes === undefined || nodes.length === 0) return ok([]);
  const planned = planAppendNodes(state, nodes, now);
  return planned.ok ? ok(planned.value.nodes) : planned;
}

export function planSaveCheckpoint(
  state: ThreadState,
  input: CheckpointInput,
  now: string,
): Result<CheckpointSavedEvent> {
  const nodes = planNodes(state, input.nodes, now);
  if (!nodes.ok) return nodes;
  const event: CheckpointSavedEvent = {
    type: 'checkpoint_saved',
    checkpointId: input.checkpointId,
    data: input.data,
    nodes: nodes.value,
  };
  if (input.parentCheckpointId !== undefined) event.parentCheckpointId = input.parentCheckpointId;
  return ok(event);
}

export function planSaveCheckpointWrites(
  state: ThreadState,
  input: CheckpointWritesInput,
  now: string,
): Result<CheckpointWritesSavedEvent> {
  const nodes = planNodes(state, input.nodes, now);
  if (!nodes.ok) return nodes;
  return ok({
    type: 'checkpoint_writes_saved',
    checkpointId: input.checkpointId,
    taskId: input.taskId,
    data: input.data,
    nodes: nodes.value,
  });
}
