/** `npm run bench -- peers`: not built yet. */
export async function runPeersBench(): Promise<void> {
  console.error('The peers benchmark is not built yet.');
  process.exitCode = 1;
}
