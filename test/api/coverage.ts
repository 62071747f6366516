/**
 * Which schema fields the documents a test executed touched: every executed document is walked
 * with TypeInfo, so "every name of the public schema is exercised" is checked, not claimed.
 */
import { getNamedType, parse, TypeInfo, visit, visitWithTypeInfo } from 'graphql';
import { schema } from '../../src/graphql/schema.js';

export function createCoverage() {
  const touched = new Set<string>();
  return {
    record(query: string) {
      const info = new TypeInfo(schema);
      visit(
        parse(query),
        visitWithTypeInfo(info, {
          Field() {
            const parent = info.getParentType();
            const field = info.getFieldDef();
            if (parent && field) touched.add(`${parent.name}.${field.name}`);
          },
          Argument() {
            const field = info.getFieldDef();
            const arg = info.getArgument();
            const parent = info.getParentType();
            if (parent && field && arg) touched.add(`${parent.name}.${field.name}(${arg.name})`);
            if (arg) touched.add(`input ${getNamedType(arg.type).name}`);
          },
          InlineFragment(node) {
            if (node.typeCondition) touched.add(`on ${node.typeCondition.name.value}`);
          },
          ObjectField() {
            const input = info.getInputType();
            if (input) touched.add(`input ${getNamedType(input).name}`);
          },
        }),
      );
    },
    touched,
    missing(names: readonly string[]) {
      return names.filter((n) => !touched.has(n));
    },
  };
}

/** The names the public contract binds (subscriptions excepted), as coverage keys. */
export const CONTRACT_NAMES: readonly string[] = [
  ...['thread', 'threads', 'run', 'runs', 'causalNode', 'diffThreads'].map((f) => `Query.${f}`),
  'Query.threads(first)',
  'Query.threads(after)',
  'Query.threads(filter)',
  'Query.runs(first)',
  'Query.runs(after)',
  'Query.runs(filter)',
  'Query.causalNode(threadId)',
  'Query.diffThreads(a)',
  'Query.diffThreads(b)',
  ...[
    'id',
    'createdAt',
    'metadata',
    'nodeTypes',
    'allowDynamicNodeTypes',
    'logLength',
    'forkedFrom',
    'frontier',
    'nodes',
    'nodeCount',
    'causalNode',
    'resources',
    'memory',
    'events',
    'runs',
    'state',
    'spend',
    'verify',
  ].map((f) => `Thread.${f}`),
  'Thread.nodes(first)',
  'Thread.nodes(after)',
  'Thread.nodes(kinds)',
  'Thread.nodes(afterSequence)',
  'Thread.memory(type)',
  'Thread.memory(key)',
  'Thread.events(afterIndex)',
  'Thread.events(first)',
  'Thread.runs(status)',
  'Thread.state(atIndex)',
  'Thread.verify(strict)',
  'Thread.projection',
  'Thread.projection(input)',
  'input ProjectionInput',
  'on Projection',
  ...['prompt', 'tokenEstimate', 'nodeIds', 'nodes', 'layers', 'digest'].map(
    (f) => `Projection.${f}`,
  ),
  ...['bigBrain', 'peripheral', 'focus', 'timeline'].map((f) => `ProjectionLayers.${f}`),
  'on ProjectionOverflowError',
  'ProjectionOverflowError.requiredTokens',
  'ProjectionOverflowError.maxPromptTokens',
  'ThreadFork.thread',
  'ThreadFork.upToIndex',
  ...[
    'id',
    'kind',
    'parents',
    'parentIds',
    'children',
    'payload',
    'createdAt',
    'sequence',
    'resourceKey',
    'isFrontier',
    'isCurrent',
    'supersedes',
    'supersededBy',
    'ancestors',
    'descendants',
    'taint',
    'run',
    'logIndex',
  ].map((f) => `CausalNode.${f}`),
  'CausalNode.ancestors(depth)',
  'CausalNode.ancestors(kinds)',
  'CausalNode.descendants(depth)',
  'CausalNode.descendants(kinds)',
  ...['type', 'key', 'content', 'node', 'history', 'tainted'].map((f) => `MemoryItem.${f}`),
  ...['inputTokens', 'outputTokens', 'totalTokens', 'costUsd', 'calls'].map((f) => `Spend.${f}`),
  ...[
    'id',
    'thread',
    'goal',
    'constraints',
    'status',
    'currentNode',
    'visitedNodes',
    'iterationCount',
    'maxIterations',
    'retryCount',
    'maxRetries',
    'lastError',
    'waitingFor',
    'waitingSince',
    'waitingTimeoutAt',
    'pendingApproval',
    'memory',
    'taint',
    'lessonProvenance',
    'injectedFactIds',
    'compensationStack',
    'supervisorHistory',
    'spend',
    'budget',
    'modelBreakdown',
    'nodeBreakdown',
    'createdAt',
    'updatedAt',
    'startedAt',
    'workflowState',
  ].map((f) => `Run.${f}`),
  'RunBudget.maxTokenBudget',
  'RunBudget.budgetUsd',
  'RunBudget.thresholdsFired',
  'KeyedSpend.key',
  'KeyedSpend.spend',
  ...['ok', 'checkedEntries', 'firstBadIndex', 'message'].map((f) => `VerifyReport.${f}`),
  ...['commonPrefix', 'onlyA', 'onlyB'].map((f) => `ThreadDiff.${f}`),
  ...['index', 'id', 'type', 'recordedAt', 'entry'].map((f) => `ThreadEvent.${f}`),
  ...['edges', 'pageInfo'].map((f) => `CausalNodeConnection.${f}`),
  'CausalNodeEdge.cursor',
  'CausalNodeEdge.node',
  'PageInfo.hasNextPage',
  'PageInfo.endCursor',
  'ThreadConnection.edges',
  'RunConnection.edges',
  'ThreadEventConnection.edges',
  'Error.message',
  'Error.code',
  ...[
    'createThread',
    'appendNodes',
    'remember',
    'importState',
    'forkThread',
    'startRun',
    'dispatch',
    'resolveApproval',
    'cancelRun',
    'recordUsage',
    'importWorkflowState',
  ].map((f) => `Mutation.${f}`),
  ...[
    'CreateThreadSuccess',
    'AppendNodesSuccess',
    'RememberSuccess',
    'ImportStateSuccess',
    'ForkThreadSuccess',
    'StartRunSuccess',
    'DispatchSuccess',
    'ResolveApprovalSuccess',
    'CancelRunSuccess',
    'RecordUsageSuccess',
    'ImportWorkflowStateSuccess',
  ].map((t) => `on ${t}`),
  'CreateThreadSuccess.thread',
  'AppendNodesSuccess.thread',
  'AppendNodesSuccess.nodes',
  'AppendNodesSuccess.logIndex',
  'RememberSuccess.memory',
  'RememberSuccess.node',
  'RememberSuccess.logIndex',
  'ImportStateSuccess.thread',
  'ForkThreadSuccess.thread',
  'StartRunSuccess.run',
  'StartRunSuccess.logIndex',
  'DispatchSuccess.run',
  'DispatchSuccess.logIndex',
  'ResolveApprovalSuccess.run',
  'CancelRunSuccess.run',
  'RecordUsageSuccess.run',
  'ImportWorkflowStateSuccess.run',
  ...[
    'ConflictError',
    'ValidationError',
    'InvalidStateError',
    'InvalidTransitionError',
    'NotFoundError',
    'IdempotencyKeyReusedError',
  ].map((t) => `on ${t}`),
  'ConflictError.expectedIndex',
  'ConflictError.actualIndex',
  'ValidationError.issues',
  'InvalidStateError.nodeId',
  'InvalidTransitionError.from',
  'InvalidTransitionError.to',
  ...['ThreadFilter', 'RunFilter', 'CreateThreadInput', 'AppendNodesInput', 'NodeInput'].map(
    (t) => `input ${t}`,
  ),
  ...['TaintInput', 'UsageInput', 'RememberInput', 'ImportStateInput', 'ForkThreadInput'].map(
    (t) => `input ${t}`,
  ),
  ...['StartRunInput', 'DispatchInput', 'ActionInput', 'ResolveApprovalInput'].map(
    (t) => `input ${t}`,
  ),
  ...['CancelRunInput', 'RecordUsageInput', 'ImportWorkflowStateInput'].map((t) => `input ${t}`),
];
