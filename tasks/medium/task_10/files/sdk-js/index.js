// Minimal dispatch client: latest positions for a depot.
export async function latestPositions(baseUrl, depot, fetchImpl = fetch) {
  const res = await fetchImpl(`${baseUrl}/depots/${encodeURIComponent(depot)}/positions`);
  if (!res.ok) throw new Error(`dispatch API ${res.status}`);
  return res.json();
}
