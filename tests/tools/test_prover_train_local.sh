#!/usr/bin/env bash
# prover-train-local as a user runs it: the run configuration's keys and --estimators, one
# line per iteration, the summary, checkpoints with --save; bad arguments exit 2, --help 0.
set -u
bin=${PV_BUILD_DIR:-build}/bin/prover-train-local
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
easy=(env.gen_receptacles=3 env.gen_distractors=0 env.gen_task_types=2 env.max_steps=20
      learner.batch_groups=3 learner.eval_tasks=8 learner.bc_episodes=16 run.iterations=2)
"$bin" --estimators grpo,prover --save "${easy[@]}" "run.out_dir=$dir/out/new" > "$dir/log" 2>&1 ||
  { echo "prover-train-local failed"; cat "$dir/log"; fail=1; }
for want in "eval untrained" "bc " "grpo   iter 2/2" "prover iter 2/2" "eval prover" "summary: "; do
  grep -q "^$want" "$dir/log" || { echo "no line '$want'"; fail=1; }
done
for f in bc grpo prover; do
  [ -s "$dir/out/new/$f.safetensors" ] || { echo "no $f.safetensors"; fail=1; }
done
# each estimator's run folder, as the learner writes one: the start's evaluation as iteration
# 0, a train line per iteration, the last evaluation at the last iteration, the summary
for e in grpo prover; do
  m=$dir/out/new/rl-$e/metrics.jsonl
  [ "$(grep -c '"kind":"train"' "$m" 2>/dev/null)" = 2 ] || { echo "rl-$e: not 2 train lines"; cat "$m"; fail=1; }
  head -1 "$m" | grep -q '"kind":"eval","iteration":0,' || { echo "rl-$e: no start evaluation first"; fail=1; }
  tail -1 "$m" | grep -q '"kind":"eval","iteration":2,' || { echo "rl-$e: no last evaluation"; fail=1; }
  grep -q '"outcome": *"completed"' "$dir/out/new/rl-$e/summary.json" &&
    grep -q "^== prover run summary (alfworld, $e," "$dir/out/new/rl-$e/summary.txt" ||
    { echo "rl-$e: no summary"; fail=1; }
done
plot=${PV_BUILD_DIR:-build}/bin/prover-plot
if [ -x "$plot" ]; then
  [ "$("$plot" --dump "$dir/out/new/rl-prover" | grep -c '^new/rl-prover train ')" = 2 ] ||
    { echo "prover-plot does not read the run folder"; fail=1; }
fi
# from a checkpoint: the first evaluation is the loaded policy ("start"); the verifiers'
# continuations trained on are counted on the iteration lines and in the judge's line
"$bin" --estimators prover "${easy[@]}" learner.bc_episodes=0 prover.reuse_continuations=true \
  run.iterations=3 "policy.init_checkpoint=$dir/out/new/bc.safetensors" > "$dir/start.log" 2>&1 ||
  { echo "prover-train-local from a checkpoint failed"; cat "$dir/start.log"; fail=1; }
grep -q "^eval start " "$dir/start.log" && grep -q "^summary: .*: start " "$dir/start.log" &&
  ! grep -q "untrained" "$dir/start.log" || { echo "the loaded policy is not labelled start"; cat "$dir/start.log"; fail=1; }
if grep -q "^prover iter .*segments [1-9]" "$dir/start.log"; then
  grep -q "continuations trained on (prover.reuse_continuations)" "$dir/start.log" ||
    { echo "verified segments but no continuations trained on"; cat "$dir/start.log"; fail=1; }
fi
# a second --save run into a folder that holds a run moves that run aside
# (run.out_dir.<date>, as cluster/launch does) and reads a start checkpoint inside it from
# where it went
"$bin" --estimators grpo --save "${easy[@]}" learner.bc_episodes=0 run.iterations=1 \
  "policy.init_checkpoint=$dir/out/new/bc.safetensors" "run.out_dir=$dir/out/new" > "$dir/again.log" 2>&1 ||
  { echo "a second run into the folder failed"; cat "$dir/again.log"; fail=1; }
moved=$(ls -d "$dir"/out/new.2* 2>/dev/null | head -1)
[ -n "$moved" ] && [ -s "$moved/rl-prover/summary.json" ] && [ -s "$moved/bc.safetensors" ] ||
  { echo "the earlier run was not moved aside whole ('$moved')"; ls "$dir/out"; fail=1; }
grep -q "^moved      policy.init_checkpoint=$moved/bc.safetensors" "$dir/again.log" &&
  grep -q "^eval start " "$dir/again.log" || { echo "the start was not read from the moved folder"; cat "$dir/again.log"; fail=1; }
[ -s "$dir/out/new/rl-grpo/summary.json" ] && [ ! -e "$dir/out/new/rl-prover" ] ||
  { echo "the new folder holds the earlier run's files"; fail=1; }
# the language model: its iteration lines report mixed groups, tokens, entropy and the rollout/training mismatch
# (~5e-7: the learner recomputes the behaviour log-probs), --save writes Hugging Face folders
lm=(policy.kind=transformer policy.layers=1 policy.hidden_size=32 policy.heads=2 policy.kv_heads=1
    policy.intermediate_size=64 policy.vocab_size=300 policy.max_new_tokens=8
    policy.max_context=512 env.max_steps=6 actor.group_size=2 learner.batch_groups=1
    learner.eval_tasks=2 learner.bc_episodes=4 run.iterations=2)
"$bin" --estimators grpo --save "${easy[@]}" "${lm[@]}" "run.out_dir=$dir/out/lm" > "$dir/lm.log" 2>&1 ||
  { echo "prover-train-local (transformer) failed"; cat "$dir/lm.log"; fail=1; }
grep "^grpo   iter 2/2" "$dir/lm.log" | grep -q "| mixed [0-9]*/1 |.* tokens | entropy [0-9.]* | kl .* | mismatch " ||
  { echo "no mixed groups, token counts, entropy or mismatch on the transformer's iteration line"; fail=1; }
mm=$(grep -o "mismatch [0-9.e+-]*" "$dir/lm.log" | head -1 | cut -d' ' -f2)
awk -v m="${mm:-1}" 'BEGIN { exit !(m < 1e-4) }' || { echo "log-prob mismatch '$mm'"; fail=1; }
# learner.use_kl_loss: the policy after behaviour cloning is the KL reference
"$bin" --estimators grpo "${easy[@]}" "${lm[@]}" learner.use_kl_loss=true run.iterations=1 \
  "run.out_dir=$dir/out/kl" > "$dir/kl.log" 2>&1 ||
  { echo "prover-train-local with learner.use_kl_loss failed"; cat "$dir/kl.log"; fail=1; }
grep "^grpo   iter 1/1" "$dir/kl.log" | grep -q "| kl [0-9.]* |" ||
  { echo "no KL on the iteration line with learner.use_kl_loss"; fail=1; }
for f in bc/config.json bc/model.safetensors bc/tokenizer.json grpo/trainer_state.safetensors; do
  [ -s "$dir/out/lm/$f" ] || { echo "no $f"; fail=1; }
done
# --bc-only: behaviour cloning and its evaluation, the bc folder, no untrained evaluation, no RL
"$bin" --bc-only "${easy[@]}" "${lm[@]}" "run.out_dir=$dir/out/bconly" > "$dir/bconly.log" 2>&1 ||
  { echo "prover-train-local --bc-only failed"; cat "$dir/bconly.log"; fail=1; }
[ -s "$dir/out/bconly/bc/model.safetensors" ] || { echo "--bc-only saved no bc folder"; fail=1; }
grep -q "^summary: held-out success (greedy / sampled) after behaviour cloning" "$dir/bconly.log" &&
  ! grep -q "untrained\|iter 1/" "$dir/bconly.log" || { echo "--bc-only did more or less than cloning"; cat "$dir/bconly.log"; fail=1; }
"$bin" --bc-only "${easy[@]}" learner.bc_episodes=0 > /dev/null 2>&1
[ $? -eq 2 ] || { echo "--bc-only without demonstrations accepted"; fail=1; }
"$bin" --estimators ppo > /dev/null 2>&1; [ $? -eq 2 ] || { echo "unknown estimator accepted"; fail=1; }
"$bin" iters=3 > /dev/null 2>&1; [ $? -eq 2 ] || { echo "a bare key=value accepted"; fail=1; }
"$bin" learner.bogus=1 > /dev/null 2>&1; [ $? -eq 2 ] || { echo "an unknown key accepted"; fail=1; }
"$bin" --help | grep -q "^usage: prover-train-local" || { echo "no usage"; fail=1; }
exit $fail
