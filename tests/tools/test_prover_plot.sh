#!/usr/bin/env bash
# prover-plot as a user runs it: two runs' metrics (one with a bad line) -> a PNG; bad
# arguments and a file without records are refused with status 2; --metric draws any metric
# of the train lines (the values checked with --dump), verify_share from the step counts,
# score from the eval lines' held-out score; a missing run of a comparison is left out with a
# warning.
set -u
bin=${PV_BUILD_DIR:-build}/bin/prover-plot
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac # the --dump check runs in another folder
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/a" "$dir/b"
for r in a b; do
  for i in 1 2 3 4; do
    echo "{\"kind\":\"train\",\"iteration\":$i,\"total_env_steps\":$((i * 100)),\"success_rate\":0.$i,\"loss\":-$i.5,\"mean_reward\":0.$((i + 4)),\"cum_rollout_env_steps\":$((i * 75)),\"cum_verify_env_steps\":$((i * 25))}"
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
# --metric: the values of the key (and the mean of the last ones), aliases, verify_share
out=$("$bin" --dump --metric loss --x iteration "$dir/a=A" 2>&1)
[ "$(echo "$out" | head -n 2 | tr '\n' ';')" = "A train 1 -1.5 -1.5;A train 2 -2.5 -2;" ] ||
  { echo "--metric loss: $out"; fail=1; }
out=$("$bin" --dump --metric reward "$dir/a=A" 2>&1)
[ "$(echo "$out" | sed -n 4p)" = "A train 400 0.80000000000000004 0.65000000000000002" ] ||
  { echo "--metric reward (mean_reward): $out"; fail=1; }
out=$("$bin" --dump --metric verify_share "$dir/a=A" 2>&1)
[ "$(echo "$out" | sed -n 1p)" = "A train 100 0.25 0.25" ] || { echo "verify_share: $out"; fail=1; }
"$bin" -o "$dir/loss.png" --metric entropy "$dir/a" 2> "$dir/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no run has train records with total_env_steps and entropy" "$dir/err" &&
  grep -q "numeric keys: .*loss" "$dir/err" || { echo "an absent metric: rc $rc $(cat "$dir/err")"; fail=1; }
"$bin" -o "$dir/loss.png" --metric loss "$dir/a=A" "$dir/b=B" || { echo "loss plot failed"; fail=1; }
[ "$(head -c 4 "$dir/loss.png" | od -An -c | tr -d ' ')" = '211PNG' ] || { echo "loss: not a PNG"; fail=1; }
# --metric score: the eval lines' held-out score (and score_sampled), the train line 100 x
# mean_reward; an eval line without a score is left out
echo '{"kind":"eval","iteration":4,"total_env_steps":400,"success_rate":0.2,"score":61.5,"score_sampled":58}' >> "$dir/a/metrics.jsonl"
out=$("$bin" --dump --metric score "$dir/a=A" 2>&1)
[ "$(echo "$out" | awk '$2 == "eval"' | tr '\n' ';')" = "A eval 400 61.5 61.5;" ] ||
  { echo "--metric score (eval): $out"; fail=1; }
[ "$(echo "$out" | awk '$2 == "train" && $3 == 400 {printf "%.6f", $4}')" = "80.000000" ] ||
  { echo "--metric score (train, 100 x mean_reward): $out"; fail=1; }
"$bin" -o "$dir/score.png" --metric score "$dir/a=A" || { echo "score plot failed"; fail=1; }
[ "$(head -c 4 "$dir/score.png" | od -An -c | tr -d ' ')" = '211PNG' ] || { echo "score: not a PNG"; fail=1; }
# --raw (the values as recorded, no mean of the last 10: prover-eval's acceptance plot)
"$bin" -o "$dir/raw.png" --raw --metric loss --series train "$dir/a=A" || { echo "--raw plot failed"; fail=1; }
[ "$(head -c 4 "$dir/raw.png" | od -An -c | tr -d ' ')" = '211PNG' ] || { echo "--raw: not a PNG"; fail=1; }
# a missing run of a comparison: left out with a warning, the others drawn
"$bin" -o "$dir/cmp.png" "$dir/a=grpo" "$dir/nothing-here=prover" 2> "$dir/err" ||
  { echo "a missing run failed the comparison: $(cat "$dir/err")"; fail=1; }
grep -q "warning: run prover left out" "$dir/err" || { echo "no warning: $(cat "$dir/err")"; fail=1; }
[ "$(head -c 4 "$dir/cmp.png" | od -An -c | tr -d ' ')" = '211PNG' ] || { echo "cmp: not a PNG"; fail=1; }
"$bin" --cost -o "$dir/cost.png" "$dir/a=grpo" "$dir/nothing-here=prover" 2> "$dir/err" &&
  grep -q "warning: run prover left out" "$dir/err" || { echo "--cost with a missing run: $(cat "$dir/err")"; fail=1; }
# automatic labels: folder names two runs share take their parents (grpo/seed1, contrast/seed1)
# (three of them, one given with a trailing slash; a run named by its own folder keeps it)
for c in grpo contrast exhaustive; do mkdir -p "$dir/grid/$c/seed1"; cp "$dir/a/metrics.jsonl" "$dir/grid/$c/seed1/"; done
out=$("$bin" --dump --metric loss "$dir/grid/grpo/seed1" "$dir/grid/contrast/seed1/metrics.jsonl" \
  "$dir/grid/exhaustive/seed1/" "$dir/a" 2>&1)
[ "$(echo "$out" | awk '{print $1}' | sort -u | tr '\n' ' ')" = "a contrast/seed1 exhaustive/seed1 grpo/seed1 " ] ||
  { echo "colliding labels: $out"; fail=1; }
# --cost when no run verified anything: the rollout bars alone, without gnuplot's warning of
# an empty series
mkdir -p "$dir/nov"
sed 's/"cum_verify_env_steps":[0-9]*/"cum_verify_env_steps":0/' "$dir/a/metrics.jsonl" > "$dir/nov/metrics.jsonl"
"$bin" --cost -o "$dir/nov.png" "$dir/nov=grpo" > /dev/null 2> "$dir/err" ||
  { echo "--cost without verification failed: $(cat "$dir/err")"; fail=1; }
[ ! -s "$dir/err" ] || { echo "--cost without verification printed: $(cat "$dir/err")"; fail=1; }
[ "$(head -c 4 "$dir/nov.png" | od -An -c | tr -d ' ')" = '211PNG' ] || { echo "nov: not a PNG"; fail=1; }
# --cost --dump: the bars' numbers, a line per run, and no PNG written
mkdir -p "$dir/here"
out=$(cd "$dir/here" && "$bin" --cost --dump "$dir/a=grpo" 2>&1)
[ "$out" = "grpo 300 100" ] || { echo "--cost --dump: $out"; fail=1; }
[ -z "$(ls -A "$dir/here")" ] || { echo "--cost --dump wrote $(ls "$dir/here")"; fail=1; }
exit $fail
