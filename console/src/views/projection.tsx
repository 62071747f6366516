/**
 * Projection explorer: a query and a token target → the prompt by layer, each selected node with
 * its reasons, the omitted candidates with their scores, and an overflow said plainly.
 */
import { useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ConsoleProjectionDocument } from '../generated/graphql';
import { href } from '../router';
import { ThreadPicker } from './common';

export function ProjectionView({ id }: { id: string }) {
  const [thread, setThread] = useState(id);
  const [query, setQuery] = useState('');
  const [target, setTarget] = useState('2000');
  const [asked, setAsked] = useState<{ query: string; target: number } | undefined>(undefined);
  const [result] = useQuery({
    query: ConsoleProjectionDocument,
    variables: {
      threadId: id,
      input: {
        ...(asked?.query ? { query: asked.query } : {}),
        projectionTargetTokens: asked?.target ?? 2000,
      },
    },
    pause: !id || asked === undefined,
  });
  const p = result.data?.thread?.projection;
  return (
    <div class="view">
      <h1>Projection explorer</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          if (thread !== id) location.hash = href.projection(thread.trim());
          setAsked({ query, target: Number(target) || 2000 });
        }}
      >
        <ThreadPicker label="Thread" value={thread} onInput={setThread} />
        <label>
          Query <input value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </label>
        <label>
          Target tokens{' '}
          <input
            type="number"
            min={1}
            value={target}
            onInput={(e) => setTarget(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Project</button>
      </form>
      {result.error && <p class="error">{result.error.message}</p>}
      {p?.__typename === 'ProjectionOverflowError' && (
        <p class="error" role="alert">
          Overflow: the smallest possible view needs {p.requiredTokens} tokens, over the ceiling of{' '}
          {p.maxPromptTokens}. {p.message}
        </p>
      )}
      {p?.__typename === 'ValidationError' && <p class="error">{p.message}</p>}
      {p?.__typename === 'Projection' && (
        <>
          <p class="counts">
            {p.tokenEstimate} tokens ({p.tokenizer.toLowerCase()}) · target{' '}
            {p.budget.projectionTargetTokens} · ceiling {p.budget.maxPromptTokens} · shrink level{' '}
            {p.budget.shrinkLevel} · {p.budget.trimmed} trimmed · {p.omittedCount} omitted
          </p>
          {(['bigBrain', 'peripheral', 'focus', 'timeline'] as const).map((layer) => (
            <section key={layer} class="panel" aria-label={`Layer ${layer}`}>
              <h2>{layer}</h2>
              <pre class="json">{p.layers[layer]}</pre>
            </section>
          ))}
          <section class="panel" aria-label="Selected nodes">
            <h2>Selected ({p.selected.length})</h2>
            <table class="list">
              <thead>
                <tr>
                  <th scope="col">Node</th>
                  <th scope="col">Reasons</th>
                  <th scope="col">Score</th>
                </tr>
              </thead>
              <tbody>
                {p.selected.map((s) => (
                  <tr key={s.nodeId}>
                    <td>
                      <code>{s.nodeId}</code>
                      {s.mandatory && ' (mandatory)'}
                    </td>
                    <td>{s.reasons.join(', ').toLowerCase()}</td>
                    <td>{s.score.toFixed(3)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section class="panel" aria-label="Omitted candidates">
            <h2>Omitted (best {p.omitted.length})</h2>
            <table class="list">
              <thead>
                <tr>
                  <th scope="col">Node</th>
                  <th scope="col">Why</th>
                  <th scope="col">Score</th>
                </tr>
              </thead>
              <tbody>
                {p.omitted.map((o) => (
                  <tr key={o.nodeId}>
                    <td>
                      <code>{o.nodeId}</code>
                    </td>
                    <td>
                      {o.reason.toLowerCase()}
                      {o.replacedBy && ` by ${o.replacedBy.slice(0, 12)}`}
                    </td>
                    <td>{o.score.toFixed(3)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </>
      )}
    </div>
  );
}
