/** `npm run bench -- api`: not built yet. */
export async function runApiBench(): Promise<void> {
  console.error('The api benchmark is not built yet.');
  process.exitCode = 1;
}
