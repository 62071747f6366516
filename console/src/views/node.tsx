/**
 * The details of one node of a thread: its fields, its payload (or, when it was redacted, why and
 * when instead), and links to its parents, children and ancestors.
 */
import { useQuery } from '@urql/preact';
import { ConsoleNodeDocument } from '../generated/graphql';
import { useScopes } from '../live';
import { href } from '../router';
import { RedactNode } from './actions';
import { Json } from './common';
import { Messages } from './messages';
import { Redacted } from './redaction';

export function NodeDetails({
  threadId,
  nodeId,
  onSelect,
}: {
  threadId: string;
  nodeId: string | null;
  onSelect: (id: string) => void;
}) {
  const [result] = useQuery({
    query: ConsoleNodeDocument,
    variables: { threadId, id: nodeId ?? '' },
    pause: nodeId === null,
  });
  const node = nodeId === null ? undefined : result.data?.causalNode;
  const scopes = useScopes();
  const link = (n: { id: string; kind?: string }) => (
    <li key={n.id}>
      <button type="button" class="link" onClick={() => onSelect(n.id)}>
        {n.kind ? `${n.kind.toLowerCase()} ` : ''}
        {n.id}
      </button>
    </li>
  );
  return (
    <section class="panel details" aria-label="Node details">
      <h2>Node details</h2>
      {nodeId === null && <p>Select a node in the graph (or a frontier chip) to see it here.</p>}
      {node && (
        <div data-node-id={node.id}>
          <dl>
            <dt>Id</dt>
            <dd>
              <code>{node.id}</code>
            </dd>
            <dt>Kind</dt>
            <dd>{node.kind}</dd>
            <dt>Sequence / log index</dt>
            <dd>
              {node.sequence} / {node.logIndex}
            </dd>
            {node.resourceKey && (
              <>
                <dt>Resource</dt>
                <dd>
                  {node.resourceKey}
                  {node.supersedes && <> (supersedes {node.supersedes.id.slice(0, 12)})</>}
                  {node.supersededBy && <> (superseded by {node.supersededBy.id.slice(0, 12)})</>}
                </dd>
              </>
            )}
            {node.taint && (
              <>
                <dt>Taint</dt>
                <dd class="taint" data-taint={node.taint.derived ? 'derived' : 'direct'}>
                  {node.taint.derived ? (
                    <>
                      inherited from {node.taint.derivedFrom.length} tainted{' '}
                      {node.taint.derivedFrom.length === 1 ? 'ancestor' : 'ancestors'}:
                      <ul>{node.taint.derivedFrom.map((id) => link({ id }))}</ul>
                    </>
                  ) : (
                    <TaintSource taint={node.taint} />
                  )}
                </dd>
              </>
            )}
            {node.run && (
              <>
                <dt>Run</dt>
                <dd>
                  <a href={href.run(threadId, node.run.id)}>{node.run.id}</a> (
                  {node.run.status.toLowerCase()})
                </dd>
              </>
            )}
            {node.usage !== null && node.usage !== undefined && (
              <>
                <dt>Usage</dt>
                <dd>
                  <Json value={node.usage} />
                </dd>
              </>
            )}
          </dl>
          {!node.redaction && <Messages payload={node.payload} />}
          <h3>Payload</h3>
          {node.redaction ? <Redacted redaction={node.redaction} /> : <Json value={node.payload} />}
          {!node.redaction && scopes.write && (
            <RedactNode key={node.id} threadId={threadId} nodeId={node.id} />
          )}
          <h3>Parents</h3>
          <ul>{node.parentIds.map((p) => link({ id: p }))}</ul>
          <h3>Children</h3>
          <ul>{node.children.map(link)}</ul>
          <h3>Ancestors (6 levels)</h3>
          <ul>{node.ancestors.map(link)}</ul>
        </div>
      )}
    </section>
  );
}

/** Where untrusted data came from: its source, and the tool, server and agent when known. */
export function TaintSource({
  taint,
}: {
  taint: {
    source: string;
    toolName?: string | null;
    serverId?: string | null;
    agentId?: string | null;
  };
}) {
  const from = [
    taint.toolName && `tool ${taint.toolName}`,
    taint.serverId && `server ${taint.serverId}`,
    taint.agentId && `agent ${taint.agentId}`,
  ].filter(Boolean);
  return (
    <>
      untrusted data from {taint.source.replace(/_/g, ' ')}
      {from.length > 0 && ` (${from.join(', ')})`}
    </>
  );
}
