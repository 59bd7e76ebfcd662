#!/usr/bin/env bash
# cluster/eval-grid end to end at CI size (issue 8): one seed, a few learner updates on small
# generated ALFWorld games, four configurations (grpo, contrast, exhaustive, grpo-matched),
# each a real mpirun job (broker, learner, judge, verifier, actor) on a private port; then the
# aggregation. Checks what a user gets: results.md with a table row per configuration whose
# numbers are finite, results.json agreeing with it, the PNGs (the acceptance plot when a
# segment was verified), one run folder per
# configuration, exhaustive proposing far more than contrast (and, in --local, verifying
# more: a pipeline's verification is cut by a timeout, so there it depends on the machine's
# speed), and judge precision
# measured for the ProVer runs only; before them --local (each run in one process, no
# mpirun needed: the same run folders and rows); then --policy transformer: one behaviour
# cloning per seed that every configuration starts from (kept by --keep), and the
# equal-tokens column.
# Exit 0 pass, 1 fail, 77 skip (no mpirun).
set -u
src=${PV_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PV_BUILD_DIR:-$src/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  [ -f "$tmp/ci/results.md" ] && cat "$tmp/ci/results.md"
  for log in "$tmp"/ci/alfworld/*/seed1/job.log "$tmp"/local/alfworld/*/seed1/job.log; do
    [ -f "$log" ] && { echo "== $log"; tail -n 30 "$log"; }
  done
  exit 1
}
cd "$src" || exit 1
# --local first (it needs no mpirun): the grid with each run in one process
# (prover-train-local --save); the run folders are laid out as the pipeline's, so prover-eval
# aggregates them the same way
cluster/eval-grid --tiny --local --configs grpo,contrast,exhaustive --out "$tmp" --name local \
  --build "$build" > "$tmp/local.log" 2>&1 || { cat "$tmp/local.log"; fail "eval-grid --local failed"; }
grep -q "each in one process" "$tmp/local.log" || fail "--local does not say how it runs"
for c in grpo contrast exhaustive; do
  d=$tmp/local/alfworld/$c/seed1
  for f in metrics.jsonl summary.json summary.txt config.yaml job.log; do
    [ -s "$d/$f" ] || fail "--local $c: no $f"
  done
  [ ! -e "$d/.local" ] || fail "--local $c: the process's folder (checkpoints) kept"
  grep -q "^  out_dir: \"$d\"\$" "$d/config.yaml" || fail "--local $c: config.yaml's out_dir is not the run folder"
  grep -q "^| $c | 1 | [0-9]" "$tmp/local/results.md" || fail "--local: no row for $c"
done
/usr/bin/python3 - "$tmp/local/results.json" <<'EOF' || fail "--local results.json"
import json, sys
cs = {c["config"]: c for c in json.load(open(sys.argv[1]))["envs"][0]["configs"]}
assert cs["grpo"]["verify_share"]["mean"] == 0.0
assert cs["exhaustive"]["verify_share"]["mean"] > cs["contrast"]["verify_share"]["mean"], cs
EOF
echo "eval-grid --local: three in-process runs aggregated like the pipeline's"

# the llm configuration against the stand-in endpoint (tests/judge/fake_openai.py, a scripted
# test double, not a model): the grid's LLM-judge row, its acceptance split by judge
python3 tests/judge/fake_openai.py --port 0 --port-file "$tmp/llm.port" --script search,oracle \
  > "$tmp/llm-server.log" 2>&1 &
llm_pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/llm.port" ] && break; sleep 0.1; done
[ -s "$tmp/llm.port" ] || { kill "$llm_pid"; fail "the stand-in endpoint did not start: $(cat "$tmp/llm-server.log")"; }
cluster/eval-grid --tiny --local --configs llm --out "$tmp" --name llm --build "$build" \
  judge.base_url="http://127.0.0.1:$(cat "$tmp/llm.port")/v1" judge.model=stand-in \
  > "$tmp/llm.log" 2>&1 || { kill "$llm_pid"; cat "$tmp/llm.log"; fail "eval-grid --configs llm failed"; }
kill "$llm_pid"
grep -q "^| llm | 1 | [0-9]" "$tmp/llm/results.md" || { cat "$tmp/llm.log"; fail "--configs llm: no row"; }
grep -q "llm judge: the model answered [1-9][0-9]* of [1-9]" "$tmp/llm.log" ||
  { cat "$tmp/llm.log"; fail "--configs llm: the progress line does not say what the model answered"; }
/usr/bin/python3 - "$tmp/llm/alfworld/llm/seed1/summary.json" <<'EOF2' || fail "--configs llm: the run's judge"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["judge"] == "llm", s["judge"]
assert s["llm_judge"]["requests"] > 0, s.get("llm_judge")
EOF2
echo "eval-grid --configs llm: a run judged by the stand-in endpoint"

command -v mpirun > /dev/null || { echo "skip: no mpirun (after --local passed)"; exit 77; }
cluster/eval-grid --tiny --configs grpo,contrast,exhaustive,grpo-matched --out "$tmp" --name ci \
  --build "$build" > "$tmp/grid.log" 2>&1 || { cat "$tmp/grid.log"; fail "cluster/eval-grid failed"; }
md=$tmp/ci/results.md
[ -s "$md" ] || fail "no results.md"
grep -q "^- Machine: [0-9]* cores" "$md" || fail "results.md names no machine"
grep -q "^- Runs finished: 20[0-9][0-9]-" "$md" || fail "results.md has no date"
grep -q "^- Command: \`cluster/eval-grid --tiny" "$md" || fail "results.md has not the command"
for c in grpo grpo-matched contrast exhaustive; do
  row=$(grep "^| $c |" "$md") || fail "no table row for $c"
  # columns: name, seeds, final, minus grpo, final sampled, final score, at updates, at
  # steps, at tokens (every run counts its generated tokens), to target, share, precision,
  # acceptance, steps, reward, wall
  IFS='|' read -r -a cells <<< "$row"
  [ "${cells[2]// /}" = 1 ] || fail "$c: seeds '${cells[2]}'"
  for k in 3 5 6 7 8 9 15 16; do
    [[ "${cells[$k]}" =~ ^\ [0-9]+\.[0-9]+\ $ ]] || fail "$c: column $k is '${cells[$k]}', not a number"
  done
  # one seed: no interval against grpo
  [ "${cells[4]// /}" = "—" ] || fail "$c: minus grpo '${cells[4]}' with one seed"
  [[ "${cells[11]}" =~ ^\ [0-9]+\.[0-9]%\ $ ]] || fail "$c: verification share '${cells[11]}'"
  [[ "${cells[14]}" =~ ^\ [0-9.]+[kM]?\ $ ]] || fail "$c: env steps '${cells[14]}'"
  # the acceptance rate: a percentage for the judged configurations, "—" for GRPO
  if [ "${c%-matched}" = grpo ]; then [ "${cells[13]// /}" = "—" ] || fail "$c: acceptance '${cells[13]}'";
  else [[ "${cells[13]}" =~ ^\ [0-9]+\.[0-9]%\ $ ]] || fail "$c: acceptance '${cells[13]}'"; fi
  [ -s "$tmp/ci/alfworld/$c/seed1/metrics.jsonl" ] || fail "$c: no run folder"
  [ ! -e "$tmp/ci/alfworld/$c/seed1/checkpoint.safetensors" ] || fail "$c: checkpoint kept"
done
grep -q "| success at [0-9.]*[kM]\\? tokens |" "$md" || fail "results.md has no equal-tokens column"
plots="success-vs-updates success-vs-env-steps verification-cost success-vs-tokens"
# the acceptance plot exists when a configuration verified a segment (exhaustive almost always)
if grep -qh '"segments_verified":[1-9]' "$tmp"/ci/alfworld/*/seed1/metrics.jsonl; then
  plots+=" acceptance"
  grep -q 'acceptance_rate_cum' "$tmp/ci/alfworld/exhaustive/mean.jsonl" "$tmp/ci/alfworld/contrast/mean.jsonl" ||
    fail "segments were verified but no mean.jsonl has acceptance_rate_cum"
  ! grep -q 'acceptance_rate_cum' "$tmp/ci/alfworld/grpo/mean.jsonl" || fail "grpo has an acceptance curve"
fi
for p in $plots; do
  f=$tmp/ci/alfworld-$p.png
  [ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = '211PNG' ] || fail "$f is not a PNG"
done
/usr/bin/python3 - "$tmp/ci/results.json" "$tmp/ci/alfworld" <<'EOF' || fail "results.json"
import json, math, sys
r = json.load(open(sys.argv[1]))
env = r["envs"][0]
cs = {c["config"]: c for c in env["configs"]}
assert list(cs) == ["grpo", "grpo-matched", "contrast", "exhaustive"], list(cs)
# grpo-matched: GRPO with learner.batch_groups scaled by contrast's environment steps per
# update over grpo's (read here from the runs' summaries), so its budget is ProVer's
def per_update(c):
    s = json.load(open(f"{sys.argv[2]}/{c}/seed1/summary.json"))
    return (s["rollout_env_steps"] + s["verify_env_steps"]) / s["iterations"]
want = max(4, int(4 * per_update("contrast") / per_update("grpo") + 0.5))
assert cs["grpo-matched"]["overrides"] == f"algorithm.adv_estimator=grpo learner.batch_groups={want}", (cs["grpo-matched"]["overrides"], want)
assert cs["grpo-matched"]["verify_share"]["mean"] == 0.0
for c in cs.values():
    # ALFWorld's reward is 0/1: the score is 100 x the success
    assert abs(c["final_score"]["mean"] - 100 * c["final_success"]["mean"]) < 1e-6, c
    for k in ("final_success", "final_success_sampled", "final_score", "success_at_equal_updates", "success_at_equal_env_steps",
              "verify_share", "env_steps"):
        v = c[k]["mean"]
        assert v is not None and math.isfinite(v), (c["config"], k, v)
assert cs["grpo"]["verify_share"]["mean"] == 0.0
assert cs["grpo"]["judge_precision"]["mean"] is None
assert cs["grpo"]["acceptance_rate"]["mean"] is None
for k in ("contrast", "exhaustive"):
    a = cs[k]["acceptance_rate"]["mean"]
    assert a is not None and 0.0 <= a <= 1.0, (k, a)
for k in ("contrast", "exhaustive"):
    p = cs[k]["judge_precision"]["mean"]
    assert p is not None and 0.0 <= p <= 1.0, (k, p)
# exhaustive proposes every step of a mixed group, contrast one segment: what the 3 s
# verification timeout lets it verify depends on the machine's speed (under a sanitizer on a
# loaded machine, less than contrast), so its verification cost is compared in --local above
def summary(c):
    return json.load(open(f"{sys.argv[2]}/{c}/seed1/summary.json"))
ex, co = summary("exhaustive"), summary("contrast")
assert ex["proposals"] > 4 * co["proposals"] > 0, (ex["proposals"], co["proposals"])
assert env["equal_env_steps"] <= min(c["env_steps"]["mean"] for c in cs.values())
for c in cs.values():  # one seed each: the seed's value, and no interval against grpo
    assert list(c["final_success_by_seed"]) == ["seed1"], c["final_success_by_seed"]
    assert c["final_success_by_seed"]["seed1"] == c["final_success"]["mean"]
    assert c["final_success_minus_grpo"] is None
EOF
echo "eval-grid: $(grep -c '^| [a-z]* | 1 |' "$md") rows, plots and results.json as expected"

# --policy transformer (issue 19): one behaviour cloning per seed, every configuration starts
# from it; the results compare at equal generated tokens too
lm=$tmp/lm
cluster/eval-grid --tiny --policy transformer --configs grpo,contrast --out "$tmp" --name lm \
  --build "$build" > "$tmp/lm.log" 2>&1 || { cat "$tmp/lm.log"; fail "eval-grid --policy transformer failed"; }
bc=$lm/alfworld/.bc/seed1
[ -s "$bc/bc/model.safetensors" ] && [ -s "$bc/bc/tokenizer.json" ] || fail "no behaviour-cloning start in $bc"
grep -q "^summary: held-out success (greedy / sampled) after behaviour cloning" "$bc/bc.log" || fail "bc.log has no summary"
for c in grpo contrast; do
  grep -q "policy initialised from $bc/bc\$" "$lm/alfworld/$c/seed1/job.log" || fail "lm $c did not start from $bc/bc"
  [ ! -e "$lm/alfworld/$c/seed1/checkpoint" ] || fail "lm $c: checkpoint folder kept"
done
! grep -q "^| bc |" "$lm/results.md" || fail "the behaviour-cloning folder is read as a configuration"
grep -q "| success at [0-9.]*[kM]\\? tokens |" "$lm/results.md" || fail "lm results.md has no equal-tokens column"
[ "$(head -c 4 "$lm/alfworld-success-vs-tokens.png" 2>/dev/null | od -An -c | tr -d ' ')" = '211PNG' ] ||
  fail "no success-vs-tokens plot"
/usr/bin/python3 - "$lm/results.json" <<'EOF' || fail "lm results.json"
import json, math, sys
env = json.load(open(sys.argv[1]))["envs"][0]
# a language model writes several tokens per action: the token budget exceeds the steps
assert env["equal_tokens"] is not None and env["equal_tokens"] > env["equal_env_steps"], env
for c in env["configs"]:
    v = c["success_at_equal_tokens"]["mean"]
    assert v is not None and math.isfinite(v), (c["config"], v)
EOF
# finishing the grid with a configuration more: the finished runs and the start are kept
cluster/eval-grid --tiny --policy transformer --configs grpo,random --keep --out "$tmp" --name lm \
  --build "$build" > "$tmp/lm2.log" 2>&1 || { cat "$tmp/lm2.log"; fail "eval-grid --keep failed"; }
grep -q "grpo seed 1: kept" "$tmp/lm2.log" || fail "--keep ran grpo again"
grep -q "behaviour cloning kept" "$tmp/lm2.log" || fail "--keep made the behaviour cloning again"
grep -q "policy initialised from $bc/bc\$" "$lm/alfworld/random/seed1/job.log" || fail "lm random did not start from $bc/bc"
echo "eval-grid --policy transformer: one behaviour cloning, both configurations started from it"
exit 0
