/** What a link that opens nothing shows: what is wrong with it, and a way on. */
import { href } from '../router';

export function BadLinkView({ link, problem }: { link: string; problem: 'escape' | 'page' }) {
  return (
    <section class="panel" aria-labelledby="bad-link-title" data-bad-link={problem}>
      <h1 id="bad-link-title">Bad link</h1>
      <p role="alert">
        {problem === 'escape'
          ? 'This link has a broken %-escape (a % must be followed by two hex digits that, together, spell UTF-8), so it names no thread or page: '
          : 'The console has no page at this link: '}
        <code>{link}</code>
      </p>
      <p>
        Check where the link came from, or go to the <a href={href.threads()}>thread list</a>.
      </p>
    </section>
  );
}
