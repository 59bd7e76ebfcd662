#!/usr/bin/env bash
# prover-env play --policy as a user runs it (issue 12, item 6): a checkpoint that
# prover-train-local --save wrote plays the run's own held-out tasks, and wins exactly the
# games its greedy evaluation counted; the transcript shows each action's probability;
# a run folder, a checkpoint file and a language model's Hugging Face directory are read;
# what is not a checkpoint, or one of other shapes, exits 2 with a message naming it.
set -u
build=${PV_BUILD_DIR:-build}
train=$build/bin/prover-train-local
env=$build/bin/prover-env
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
# behaviour cloning then one GRPO iteration (deterministic, single process) on small
# generated games, 50 held-out tasks evaluated greedily after each phase
easy=(env.gen_receptacles=3 env.gen_distractors=0 env.gen_task_types=2 env.max_steps=20)
"$train" --save --estimators grpo "${easy[@]}" learner.bc_episodes=80 learner.bc_epochs=10 \
  learner.eval_tasks=50 run.iterations=1 "run.out_dir=$dir/run" > "$dir/train.log" 2>&1 ||
  { echo "prover-train-local failed"; cat "$dir/train.log"; exit 1; }
[ -s "$dir/run/config.yaml" ] || { echo "--save wrote no config.yaml"; fail=1; }
for phase in bc grpo; do
  rate=$(grep "^eval $phase " "$dir/train.log" | grep -o "greedy [0-9.]*" | cut -d' ' -f2)
  want=$(awk -v r="${rate:-x}" 'BEGIN { printf "%d", r * 50 + 0.5 }')
  "$env" play --policy "$dir/run/$phase.safetensors" --split test --episodes 50 \
    > "$dir/$phase.txt" 2> "$dir/$phase.err" || { echo "play $phase failed"; cat "$dir/$phase.err"; fail=1; }
  got=$(grep -o "^won [0-9]* of 50 episodes" "$dir/$phase.txt" | cut -d' ' -f2)
  echo "$phase: evaluation greedy success $rate -> $want of 50 won; play --policy won ${got:-?}"
  [ "${got:-x}" = "$want" ] || { echo "play --policy is not the run's evaluation"; fail=1; }
done
# --save's run folder of an estimator holds metrics, not weights: the message names the
# checkpoint to play instead
"$env" play --policy "$dir/run/rl-grpo" --episodes 1 > /dev/null 2> "$dir/rl.err"
[ $? -eq 2 ] && grep -q "the checkpoint is $dir/run/grpo .* or $dir/run/grpo.safetensors" "$dir/rl.err" ||
  { echo "play --policy RUN/rl-grpo: $(cat "$dir/rl.err")"; fail=1; }
# the transcript: a header naming the policy, every action with a probability in (0, 1]
head -1 "$dir/bc.txt" | grep -q "^policy bow_mlp v[0-9]* from $dir/run/bc.safetensors ($dir/run/config.yaml), greedy$" ||
  { echo "header: $(head -1 "$dir/bc.txt")"; fail=1; }
n_actions=$(grep -c "^> " "$dir/bc.txt")
n_probs=$(grep -cE "^> .*    \[p (0\.[0-9]{2}|1\.00)\]  \(of [0-9]+; next: " "$dir/bc.txt")
[ "$n_actions" -gt 50 ] && [ "$n_actions" = "$n_probs" ] ||
  { echo "actions $n_actions, with a probability and alternatives $n_probs"; fail=1; }
# greedy is deterministic; sampling follows its seed
"$env" play --policy "$dir/run/bc.safetensors" --split test --episodes 50 2>/dev/null |
  cmp -s - "$dir/bc.txt" || { echo "greedy play is not deterministic"; fail=1; }
"$env" play --policy "$dir/run/bc.safetensors" --split test --episodes 5 --sample 3 > "$dir/s1" 2>/dev/null
"$env" play --policy "$dir/run/bc.safetensors" --split test --episodes 5 --sample 3 > "$dir/s2" 2>/dev/null
cmp -s "$dir/s1" "$dir/s2" || { echo "sampled play is not reproducible from its seed"; fail=1; }
# a run folder as the learner leaves it (config.yaml, checkpoint.safetensors)
mkdir "$dir/folder" && cp "$dir/run/config.yaml" "$dir/folder/" &&
  cp "$dir/run/bc.safetensors" "$dir/folder/checkpoint.safetensors"
"$env" play --policy "$dir/folder" --split test --episodes 50 2>/dev/null | tail -1 |
  cmp -s - <(tail -1 "$dir/bc.txt") || { echo "a run folder does not play as its checkpoint"; fail=1; }
# --diagnose: one verdict per episode, tallied; its wins are the play's; a "selection" loss
# names a step where some candidate wins; the expert's ranks are tallied
"$env" play --policy "$dir/run/bc.safetensors" --split test --episodes 50 --diagnose \
  > "$dir/diag.txt" 2> "$dir/diag.err" || { echo "play --diagnose failed"; cat "$dir/diag.err"; fail=1; }
n_verdicts=$(grep -c "^verdict: " "$dir/diag.txt")
d_won=$(grep -o "^diagnosis: won [0-9]*" "$dir/diag.txt" | grep -o "[0-9]*$")
p_won=$(grep -o "^won [0-9]* of 50 episodes" "$dir/bc.txt" | cut -d' ' -f2)
sum=$(grep "^diagnosis: " "$dir/diag.txt" | grep -o "[0-9][0-9]*" | awk '{ s += $1 } END { print s + 0 }')
echo "diagnose: $n_verdicts verdicts, won ${d_won:-?} (play: ${p_won:-?}), tally $sum"
[ "$n_verdicts" = 50 ] && [ "$sum" = 50 ] && [ "${d_won:-x}" = "${p_won:-y}" ] ||
  { echo "diagnosis is not one verdict per episode, or not the play's wins"; fail=1; }
awk '/^==== task/ { win = 0 } /^step [0-9]+: [1-9][0-9]* of/ { win = 1 }
     /^verdict: selection/ && !win { bad = 1 } END { exit bad }' "$dir/diag.txt" ||
  { echo "a selection verdict without a winning candidate"; fail=1; }
# the chosen action's probability is its candidate's (when it is also the top-ranked one, the
# two printed numbers agree)
awk '/^  chose / { split($0, a, " p "); split(a[2], b, "; top: "); c = substr(a[1], 9)
       t = b[2]; sub(/;.*/, "", t); n = split(t, w, " "); tp = w[n]; sub(/ [^ ]*$/, "", t)
       if (t == c && b[1] != tp) { print "chose " c " p " b[1] ", top p " tp; bad = 1 } }
     END { exit bad }' "$dir/diag.txt" || { echo "the chosen action's p is not its candidate's"; fail=1; }
grep -q "^along the expert's admissible plans, the policy ranks the final action first [0-9]* of [1-9]" \
  "$dir/diag.txt" || { echo "no tally along the expert's plans"; tail -4 "$dir/diag.txt"; fail=1; }
# bad input: exit 2 and a message that names it
expect2() { # expect2 WHAT PATTERN ARGS...
  local what=$1 pat=$2; shift 2
  "$env" "$@" > /dev/null 2> "$dir/err"; local rc=$?
  [ $rc -eq 2 ] && grep -q "$pat" "$dir/err" ||
    { echo "$what: exit $rc, stderr: $(cat "$dir/err")"; fail=1; }
}
expect2 "a folder without a checkpoint" "it holds $dir/run/.*safetensors" play --policy "$dir/run"
expect2 "a missing path" "no such file" play --policy "$dir/nothing"
expect2 "other shapes" "another dtype or shape" play --policy "$dir/run/bc.safetensors" policy.embed_dim=16
head -c 1000 "$dir/run/bc.safetensors" > "$dir/run/cut.safetensors"
expect2 "a truncated checkpoint" "cut.safetensors" play --policy "$dir/run/cut.safetensors"
mkdir "$dir/bare" && cp "$dir/run/bc.safetensors" "$dir/bare/"
expect2 "a checkpoint without its configuration" "give --config" play --policy "$dir/bare/bc.safetensors"
expect2 "--top without --policy" "go with play --policy" play --top 2
expect2 "an unknown key" "learner.bogus" play --policy "$dir/run/bc.safetensors" learner.bogus=1
# a language model's Hugging Face directory (tiny, so that the test stays short)
lm=(policy.kind=transformer policy.layers=1 policy.hidden_size=32 policy.heads=2 policy.kv_heads=1
    policy.intermediate_size=64 policy.vocab_size=300 policy.max_new_tokens=8
    policy.max_context=512 "${easy[@]}" env.max_steps=4 actor.group_size=2 learner.batch_groups=1 learner.eval_tasks=2
    learner.bc_episodes=4 run.iterations=1)
"$train" --estimators grpo --save "${lm[@]}" "run.out_dir=$dir/lm" > "$dir/lm.log" 2>&1 ||
  { echo "prover-train-local (transformer) failed"; cat "$dir/lm.log"; fail=1; }
"$env" play --policy "$dir/lm/grpo" --split test --episodes 2 > "$dir/lm.txt" 2> "$dir/lm.err" ||
  { echo "play of a Hugging Face directory failed"; cat "$dir/lm.err"; fail=1; }
head -1 "$dir/lm.txt" | grep -q "^policy transformer v[1-9][0-9]* from $dir/lm/grpo ($dir/lm/config.yaml)" ||
  { echo "LM header: $(head -1 "$dir/lm.txt")"; fail=1; }
grep -qE "^> .*    \[p [0-9.]+, [0-9]+ tokens" "$dir/lm.txt" ||
  { echo "no LM action with its token count"; head -20 "$dir/lm.txt"; fail=1; }
exit $fail
