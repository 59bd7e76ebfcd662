#!/usr/bin/env bash
# cluster/eval-grid's protocols and configuration list without running a job (--dry-run):
# the paper protocol (issue 19) gives every run 16 groups per update, ALFWorld's default
# rooms with all six task types and 50 steps from a behaviour-cloning start, 10 seeds on
# ALFWorld and 5 elsewhere, 100 updates; the small protocol keeps the first grids' settings;
# --configs all names every configuration with grpo-matched after the runs it is matched
# to; each run's arguments are accepted by prover-config and give the settings named; a dry
# run creates nothing; --seeds A-B plans only those seeds; a bad protocol, a bad seed range,
# an option without its value or a key no run would accept exits 2. Exit 0 pass, 1 fail.
set -u
src=${PV_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PV_BUILD_DIR:-$src/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$src" || exit 1
grid() { cluster/eval-grid --build "$build" --out "$tmp" --name g --dry-run "$@"; }
get() { # run line -> value of key $2 as prover-config resolves the run's arguments
  local args
  args=${1#*: }
  # shellcheck disable=SC2086 # a word list
  "$build/bin/prover-config" $args --get "$2"
}

out=$(grid --envs alfworld,webshop,searchqa --configs grpo,contrast) || fail "paper dry run failed: $out"
[ ! -e "$tmp/g" ] || fail "a dry run created $tmp/g"
# (the first lines may say that an environment's data folder is absent: it is then skipped)
echo "$out" | grep -m1 " runs (protocol" | grep -q "protocol paper" ||
  fail "the default protocol is not paper: $(echo "$out" | grep -m1 ' runs (protocol')"
n_alf=$(echo "$out" | grep -c '^alfworld grpo seed')
[ "$n_alf" -eq 10 ] || fail "paper: $n_alf alfworld seeds, want 10"
for e in webshop searchqa; do
  d=../shared/data/$e
  [ -d "$d" ] || continue
  n=$(echo "$out" | grep -c "^$e contrast seed")
  [ "$n" -eq 5 ] || fail "paper: $n $e seeds, want 5"
  line=$(echo "$out" | grep -m1 "^$e grpo seed 1:")
  [ "$(get "$line" learner.batch_groups)" = 16 ] || fail "paper $e: batch_groups $(get "$line" learner.batch_groups)"
  [ "$(get "$line" run.iterations)" = 100 ] || fail "paper $e: iterations"
done
line=$(echo "$out" | grep -m1 '^alfworld contrast seed 3:') || fail "no alfworld contrast seed 3"
for kv in learner.batch_groups=16 env.max_steps=50 env.gen_task_types=0 env.gen_receptacles=0 \
  env.gen_distractors=0 learner.bc_episodes=400 learner.bc_epochs=10 run.iterations=100 run.seed=3 \
  actor.group_size=8 algorithm.adv_estimator=prover prover.judge=contrast prover.k=8 prover.max_segments=1 prover.sign=positive \
  prover.max_segment_turns=4 prover.lambda=1 prover.min_successes=1 prover.max_successes=3; do
  k=${kv%%=*}
  v=$(get "$line" "$k") || fail "prover-config refused the paper run's arguments or key $k"
  awk -v a="$v" -v b="${kv#*=}" 'BEGIN { n = "^-?[0-9.]+$"; exit !(a == b || (a ~ n && b ~ n && a + 0 == b + 0)) }' || fail "paper alfworld: $k is $v, want ${kv#*=}"
done

out=$(grid --protocol small --envs alfworld --configs grpo) || fail "small dry run failed"
[ "$(echo "$out" | grep -c '^alfworld grpo seed')" -eq 3 ] || fail "small: not 3 seeds"
line=$(echo "$out" | grep -m1 '^alfworld grpo seed 1:')
for kv in learner.batch_groups=8 env.max_steps=30 env.gen_task_types=2 run.iterations=80 learner.bc_episodes=0; do
  v=$(get "$line" "${kv%%=*}") || fail "prover-config refused the small run's arguments"
  [ "$v" = "${kv#*=}" ] || fail "small alfworld: ${kv%%=*} is $v, want ${kv#*=}"
done

out=$(grid --envs alfworld --configs all --seeds 1) || fail "--configs all failed"
got=$(echo "$out" | sed -n 's/^alfworld \([a-z-]*\) seed 1:.*/\1/p' | tr '\n' ' ')
want="grpo contrast grpo-matched gigpo random oracle exhaustive reuse pgpo spopp vict triage "
[ "$got" = "$want" ] || fail "--configs all: '$got', want '$want'"
line=$(echo "$out" | grep -m1 '^alfworld reuse seed 1:')
[ "$(get "$line" prover.reuse_continuations)" = true ] || fail "reuse does not set prover.reuse_continuations"

# llm: only with an endpoint (judge.model) and never in "all"; then prover.judge=llm
err=$(grid --envs alfworld --configs grpo,llm 2>&1 > /dev/null)
[ $? -eq 2 ] && [[ "$err" == *"judge.model=NAME"* ]] || fail "llm without an endpoint: $err"
err=$(grid --envs alfworld --configs all,llm judge.model=m 2>&1 > /dev/null)
[ $? -eq 2 ] && [[ "$err" == *"all stands alone"* ]] || fail "all with another name: $err"
out=$(grid --envs alfworld --configs grpo,llm --seeds 1 judge.base_url=http://127.0.0.1:9/v1 judge.model=m) ||
  fail "llm with an endpoint failed: $out"
line=$(echo "$out" | grep -m1 '^alfworld llm seed 1:') || fail "no alfworld llm seed 1"
[ "$(get "$line" prover.judge)" = llm ] && [ "$(get "$line" judge.model)" = m ] &&
  [ "$(get "$line" algorithm.adv_estimator)" = prover ] || fail "llm run: $line"

# --policy transformer: the language-model job, ALFWorld only, 3 seeds, one behaviour cloning
# per seed listed before the seed's first run, every run starting from it
out=$(grid --policy transformer --configs grpo,contrast) || fail "transformer dry run failed: $out"
echo "$out" | grep -m1 " runs (protocol" | grep -q "policy transformer" || fail "the dry run does not name the policy"
[ "$(echo "$out" | grep -c '^alfworld bc seed')" -eq 3 ] || fail "transformer: not 3 behaviour clonings"
[ "$(echo "$out" | grep -c '^alfworld contrast seed')" -eq 3 ] || fail "transformer: not 3 seeds"
! echo "$out" | grep -q '^webshop\|^searchqa' || fail "transformer: runs outside ALFWorld"
bcl=$(echo "$out" | grep -m1 '^alfworld bc seed 2:')
[[ "$bcl" == *"prover-train-local --bc-only --config cluster/configs/alfworld-lm.yaml"* &&
   "$bcl" == *" run.seed=2 run.out_dir=$tmp/g/alfworld/.bc/seed2"* ]] || fail "transformer bc line: $bcl"
line=$(echo "$out" | grep -m1 '^alfworld contrast seed 2:')
want_it=$("$build/bin/prover-config" --config cluster/configs/alfworld-lm.yaml --get run.iterations)
for kv in policy.kind=transformer learner.bc_episodes=0 policy.init_checkpoint=$tmp/g/alfworld/.bc/seed2/bc \
  run.iterations=$want_it run.seed=2 prover.judge=contrast; do
  v=$(get "$line" "${kv%%=*}") || fail "prover-config refused the transformer run's arguments"
  [ "$v" = "${kv#*=}" ] || fail "transformer alfworld: ${kv%%=*} is $v, want ${kv#*=}"
done
grid --policy transformer --envs alfworld,webshop > /dev/null 2>&1
[ $? -eq 2 ] || fail "--policy transformer with webshop does not exit 2"
grid --policy bogus > /dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown policy does not exit 2"
cluster/eval-grid --dry-run --policy > /dev/null 2>&1
[ $? -eq 2 ] || fail "--policy without a value does not exit 2"

# --seeds A-B: only those seeds (to add seeds to a grid); a bad or empty range exits 2
out=$(grid --envs alfworld --configs grpo,vict --seeds 6-10) || fail "--seeds 6-10 failed: $out"
got=$(echo "$out" | sed -n 's/^alfworld vict seed \([0-9]*\):.*/\1/p' | tr '\n' ' ')
[ "$got" = "6 7 8 9 10 " ] || fail "--seeds 6-10 planned vict seeds '$got'"
line=$(echo "$out" | grep -m1 '^alfworld grpo seed 8:') || fail "--seeds 6-10: no grpo seed 8"
[ "$(get "$line" run.seed)" = 8 ] || fail "--seeds 6-10: seed 8's run.seed is $(get "$line" run.seed)"
for bad in 0 -3 5-3 3- x 2-x; do
  grid --envs alfworld --configs grpo --seeds "$bad" > /dev/null 2>&1
  [ $? -eq 2 ] || fail "--seeds $bad does not exit 2"
done

grid --protocol huge > /dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown protocol does not exit 2"
cluster/eval-grid --dry-run --protocol > /dev/null 2>&1
[ $? -eq 2 ] || fail "--protocol without a value does not exit 2"
err=$(grid --envs alfworld --configs grpo foo.bar=1 2>&1 > /dev/null)
[ $? -eq 2 ] && [[ "$err" == *"unknown key 'foo.bar'"* ]] || fail "a dry run accepts an unknown key: $err"
grid --tiny | grep -m1 " runs (protocol" | grep -q "protocol tiny" || fail "a tiny dry run does not say so"
echo "ok"
