#!/usr/bin/env bash
# prover-plot as a user runs it: two runs' metrics (one with a bad line) -> a PNG; bad
# arguments and a file without records are refused with status 2.
set -u
bin=${PV_BUILD_DIR:-build}/bin/prover-plot
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/a" "$dir/b"
for r in a b; do
  for i in 1 2 3 4; do
    echo "{\"kind\":\"train\",\"iteration\":$i,\"total_env_steps\":$((i * 100)),\"success_rate\":0.$i}"
  done > "$dir/$r/metrics.jsonl"
  echo '{"kind":"eval","iteration":0,"total_env_steps":0,"success_rate":0.05}' >> "$dir/$r/metrics.jsonl"
done
echo 'not json' >> "$dir/b/metrics.jsonl"
fail=0
"$bin" -o "$dir/out.png" "$dir/a=grpo" "$dir/b/metrics.jsonl" 2> "$dir/err" || { echo "plot failed"; cat "$dir/err"; fail=1; }
# a PNG starts with \x89PNG
[ "$(head -c 4 "$dir/out.png" | od -An -c | tr -d ' ')" = '211PNG' ] || { echo "not a PNG"; fail=1; }
grep -q "metrics.jsonl:6: not JSON" "$dir/err" || { echo "bad line not reported"; cat "$dir/err"; fail=1; }
"$bin" -o "$dir/x.png" --x bogus "$dir/a" 2>/dev/null; [ $? -eq 2 ] || { echo "bad --x accepted"; fail=1; }
: > "$dir/empty.jsonl"
"$bin" -o "$dir/x.png" "$dir/empty.jsonl" 2>/dev/null; [ $? -eq 2 ] || { echo "empty accepted"; fail=1; }
"$bin" -o "$dir/x.png" "$dir/missing" 2>/dev/null; [ $? -eq 2 ] || { echo "missing accepted"; fail=1; }
exit $fail
