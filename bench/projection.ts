/** `npm run bench -- projection`: not built yet. */
export async function runProjectionBench(): Promise<void> {
  console.error('The projection benchmark is not built yet.');
  process.exitCode = 1;
}
