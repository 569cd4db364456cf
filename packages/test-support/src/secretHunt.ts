/**
 * What a hostile child does to find the host's secret, as a POSIX shell script: walk its ancestors
 * through /proc/<pid>/status PPid reading each environ, scan every /proc/<pid>/environ, and try to
 * unmount a private /proc to see the host's. `$1` is the marker; it prints `found:` followed by
 * each place it found it (`ancestor:`, `scan:`, `after-umount:`), nothing when it found none.
 */
export const SECRET_HUNT = `
mark="$1"; found=""
pid=$$
while [ -n "$pid" ] && [ "$pid" -gt 0 ]; do
  grep -qa "$mark" /proc/$pid/environ 2>/dev/null && found="$found ancestor:$pid"
  pid=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$pid/status 2>/dev/null)
done
for f in /proc/[0-9]*/environ; do grep -qa "$mark" "$f" 2>/dev/null && found="$found scan:$f"; done
if umount /proc 2>/dev/null; then
  for f in /proc/[0-9]*/environ; do grep -qa "$mark" "$f" 2>/dev/null && found="$found after-umount:$f"; done
fi
echo "found:$found"
`;

/** True when a hunt's output names a place where the marker was found. */
export function huntFoundSecret(output: string): boolean {
  return /found:\s*(ancestor|scan|after-umount)/.test(output);
}
