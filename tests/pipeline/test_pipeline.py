#!/usr/bin/env python3
"""End-to-end tests of the training pipeline under mpirun on loopback (issue 7).

    test_pipeline.py learn | faults | resume | addpool | addactors | crash | lost | stall | gigpo |
                     seeds | lm

Each scenario launches a whole prover job with cluster/launch (broker, learner, judge,
verifiers, actors in one MPMD mpirun job) on easy generated ALFWorld games with a private
broker port and output folder, watches it through prover-stats, and checks what a user
would: the summary, the metrics lines and the broker's counters.
  learn    success on held-out games (sampled and greedy) rises well above the untrained
           policy's
  faults   kill -9 of one actor and one verifier mid-run: the run completes, the broker
           re-queues the dead verifier's lease, no job is dropped, no group counted twice
  resume   a run resumed from a checkpoint continues at the next iteration and version, and
           its environment steps, wall time and summary (every counter) continue the first
           run's; its actors play the tasks an uninterrupted run would have played next (by
           task id, from the checkpoint's task cursor); a resume with nothing left to do is
           refused and leaves the summary as it was
  addpool  a verifier pool started later with its own mpirun (cluster/add-verifiers)
           receives the current weights from the broker relay and takes the jobs
  addactors  actors started later with their own mpirun (cluster/add-actors) get the
           current weights from the broker relay, take actor indices past the job's (no group
           id collides: the broker counts no duplicate), their groups are trained on, the
           broker logs every role's join and leave (role, index, rank, host, pid) and
           prover-stats lists them; the pool stops by itself once the run is over
  crash    the broker cannot bind its port (taken): it stops every role at once and
           cluster/launch exits 1; then the learner dies without ending the run (kill -9):
           the broker notices its absence from the "learn" service and stops every role
           (broker.learner_timeout_s), cluster/launch exits 1 and no role process is left
  lost     kill -9 of the judge, then of every actor, then of the broker, each in its own
           run: each run ends as failed within bounded time (broker.role_timeout_s), its
           summary.json says outcome "failed" with a reason naming the lost process (role,
           rank, host, pid), cluster/launch exits 1 and no role process is left (issue 15,
           item 2)
  stall    every actor frozen (SIGSTOP) with the loss watches off: no group reaches the
           learner, and after run.stall_timeout_s the run ends as failed, never as a
           time-limited success (issue 15, item 2); a run that reaches run.time_limit_s
           says outcome "time_limit", not "completed"
  seeds    algorithm.adv_estimator=pgpo, spopp (groups of one), triage and vict: short runs,
           no judge, SPO++'s values in the checkpoint and back on resume, VICT's atom traces
           at the learner
  gigpo    algorithm.adv_estimator=gigpo (verl-agent's GiGPO): no judge and no verifier is
           started, actors send their groups straight to the learner (the run plan needs no
           judge), the learner groups steps by anchor
           (observation text, then environment state key) and held-out success rises
  lm       policy.kind=transformer (a tiny language model): the actors' multi-token steps
           reach the learner (none malformed), whose recomputed log-probs match the
           behaviour log-probs of the same version (~0 rollout/training mismatch); the
           checkpoint is a Hugging Face directory and a run resumed from it continues the
           iteration and the version
Exit status 0 = pass, 1 = fail (with the reason), 77 = skipped (no mpirun).
"""
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "support"))
from pv_testlib import Fail, check, free_port  # noqa: E402

SRC = os.environ.get("PV_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BUILD = os.environ.get("PV_BUILD_DIR", os.path.join(SRC, "build"))
BIN = os.path.join(BUILD, "bin")
# Waits are hang detectors: ctest passes PV_TIMEOUT_SCALE (cmake/PvTest.cmake) for slow builds.
SCALE = float(os.environ.get("PV_TIMEOUT_SCALE", "1") or "1")
# A sanitizer build (PV_SANITIZE=ON, as tests/run --sanitize configures it: CMake then gives
# these tests PV_SANITIZED=1) runs every role 5-10 times slower: the long scenarios run
# shorter there, to look for memory errors along the same code paths, and whether the policy
# learns is judged by the normal build's run of them.
SANITIZED = os.environ.get("PV_SANITIZED", "0") == "1"
# the learning scenarios (learn, gigpo): updates and held-out tasks
LEARN_ITERS, LEARN_EVAL = (20, 50) if SANITIZED else (80, 200)


def check_learned(*checks):
    """The learning thresholds, (condition, message) pairs: judged in the normal build only."""
    if SANITIZED:
        print("sanitizer build: %d iterations; learning is judged by the normal build" %
              LEARN_ITERS)
        return
    for ok, msg in checks:
        check(ok, msg)

EASY = ["env.name=alfworld", "env.max_steps=30", "env.gen_receptacles=6",
        "env.gen_distractors=4", "env.gen_task_types=2", "actor.group_size=8",
        "learner.batch_groups=8", "learner.lr=0.003", "prover.k=4", "prover.max_segments=2",
        # the CI-sized games are easy: judge every mixed group (the paper judges 1-3 of 8), so
        # the scenarios exercise verification whatever the policy has learned
        "prover.max_successes=7",
        "algorithm.adv_estimator=prover", "broker.heartbeat_ms=200", "broker.liveness=3",
        "broker.lease_ms=4000", "broker.metrics_port=0", "learner.checkpoint_every=0",
        # no time limit: a scenario is judged by what happened (iterations reached, groups
        # conserved), and a slow machine must still get there (issue 15, item 9); a broken
        # run ends as stalled instead of hanging
        "run.time_limit_s=0", "run.stall_timeout_s=300"]


class Job:
    """One prover job launched with cluster/launch, logging to out/job.log."""

    def __init__(self, out, extra, port):
        self.out = out
        self.port = port
        self.args = EASY + ["run.out_dir=" + out, "broker.bind=tcp://127.0.0.1:%d" % port,
                            "broker.endpoint=tcp://127.0.0.1:%d" % port] + extra
        os.makedirs(out, exist_ok=True)
        self.log = open(os.path.join(out, "job.log"), "w")
        self.proc = subprocess.Popen(
            [os.path.join(SRC, "cluster", "launch"), "--build", BUILD] + self.args,
            stdout=self.log, stderr=subprocess.STDOUT, cwd=SRC, start_new_session=True)

    def wait(self, timeout, each=None):
        """The launcher's exit status. Fails only when the job stalls: nothing new in its log
        or metrics for `timeout` s (x PV_TIMEOUT_SCALE), so a slow machine (a sanitizer build
        on 2 busy cores) that still makes progress does not fail; ctest's timeout is the bound.
        `each`, when given, is called about once a second while the job runs."""
        window = timeout * SCALE
        last, seen = time.time(), None
        while True:
            try:
                return self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
            if each:
                each()
            now = self.progress()
            if now != seen:
                last, seen = time.time(), now
            elif time.time() - last > window:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                raise Fail("the job made no progress for %d s (log: %s)" % (window, self.log.name))

    def progress(self):
        """What grows while the job works: the sizes of its log and of metrics.jsonl."""
        sizes = []
        for path in (self.log.name, os.path.join(self.out, "metrics.jsonl")):
            try:
                sizes.append(os.path.getsize(path))
            except OSError:
                sizes.append(-1)
        return tuple(sizes)

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stats(self):
        # the run's own broker, found from its folder (run.out_dir/broker.endpoint)
        r = subprocess.run([os.path.join(BIN, "prover-stats"), "--json", self.out],
                           capture_output=True, text=True, timeout=10)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def metrics(self):
        path = os.path.join(self.out, "metrics.jsonl")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            # a line still being written (no newline yet) is the learner's, not an error
            return [json.loads(line) for line in f if line.strip() and line.endswith("\n")]

    def iteration(self):
        train = [m for m in self.metrics() if m["kind"] == "train"]
        return train[-1]["iteration"] if train else 0

    def summary(self):
        path = os.path.join(self.out, "summary.json")
        check(os.path.exists(path), "no summary.json (log: %s)" % self.log.name)
        with open(path) as f:
            return json.load(f)

    def pids(self, exe):
        r = subprocess.run(["pgrep", "-f", "^[^ ]*/%s .*run.out_dir=%s( |$)" % (exe, self.out)],
                           capture_output=True, text=True)
        return [int(p) for p in r.stdout.split()]


def wait_until(cond, timeout, what):
    end = time.time() + timeout * SCALE
    while time.time() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    raise Fail("timed out waiting for " + what)


def ckpt_meta(path):
    """The __metadata__ of a safetensors file (8-byte little-endian header length, JSON)."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(n))["__metadata__"]


def wait_pool_end(pool, what):
    """A pool started with its own mpirun ends by itself once the broker has shut down."""
    if pool and pool.poll() is None:
        try:
            pool.wait(timeout=60 * SCALE)
        except subprocess.TimeoutExpired:
            os.killpg(pool.pid, signal.SIGKILL)
            pool.wait()
            raise Fail("%s did not stop after the run" % what)


def train_lines(metrics):
    return [x for x in metrics if x["kind"] == "train"]


def service(stats, name):
    return next(s for s in stats["services"] if s["name"] == name)


def scenario_learn(tmp):
    iters, n_eval = LEARN_ITERS, LEARN_EVAL
    job = Job(os.path.join(tmp, "learn"), ["run.iterations=%d" % iters,
                                           "learner.eval_every=%d" % iters,
                                           "learner.eval_tasks=%d" % n_eval], free_port())
    # the learner's status as prover-stats shows it while the run goes (RUN_STATUS)
    seen = []
    def watch():
        st = job.stats()
        if st and "learner" in st.get("run", {}):
            seen.append(st["run"]["learner"])
    check(job.wait(300, watch) == 0, "cluster/launch failed")
    s = job.summary()
    m = job.metrics()
    check(seen, "prover-stats never showed the learner's status")
    last = seen[-1]
    upto = [x for x in m if x["kind"] == "train" and x["iteration"] <= last["iteration"]]
    ver = sum(x["segments_verified"] for x in upto)
    pos = sum(x["segments_positive"] for x in upto)
    shown = {j["judge"]: j for j in last["judges"]}
    check(set(shown) == {"contrast"}, "prover-stats names the judges %s" % sorted(shown))
    c = shown["contrast"]
    print("prover-stats at iteration %d: acceptance %.4f (%d of %d verified); metrics to then "
          "%d of %d; summary %.4f" % (last["iteration"], c["acceptance_rate"], c["positive"],
                                      c["verified"], pos, ver, s["acceptance_rate"]))
    check(c["verified"] == ver and c["positive"] == pos,
          "prover-stats: %d of %d positive at iteration %d, metrics.jsonl: %d of %d" % (
              c["positive"], c["verified"], last["iteration"], pos, ver))
    check(abs(c["acceptance_rate"] - pos / ver) < 1e-6, "prover-stats' acceptance rate %r" % c)
    if last["iteration"] == iters:  # the last status: the summary's numbers
        check(abs(c["acceptance_rate"] - s["acceptance_rate"]) < 1e-6,
              "prover-stats %r, summary %r" % (c["acceptance_rate"], s["acceptance_rate"]))
    # the policy-lag histogram: every trained token once (one epoch), summed into the summary
    for x in train_lines(m):
        n = sum(b["tokens"] for b in x["policy_lag_hist"].values())
        check(n == x["action_tokens"], "iteration %d: %d tokens in policy_lag_hist, %d trained" % (
            x["iteration"], n, x["action_tokens"]))
    hist = s["policy_lag_hist"]
    for k, b in hist.items():
        check(b["tokens"] == sum(x["policy_lag_hist"].get(k, {}).get("tokens", 0)
                                 for x in train_lines(m)), "summary policy_lag_hist %s" % k)
    print("policy lag of the trained tokens: %s" % ", ".join(
        "%s: %d (clip %.3f)" % (k, b["tokens"], b["clip_frac"]) for k, b in hist.items()))
    byj = s["acceptance_by_judge"]["contrast"]
    check(byj["verified"] == s["segments_verified"] and
          abs(byj["acceptance_rate"] - s["acceptance_rate"]) < 1e-12,
          "summary acceptance_by_judge %r" % byj)
    train = [x for x in m if x["kind"] == "train"]
    evals = [x for x in m if x["kind"] == "eval"]
    check(len(train) == iters and [x["iteration"] for x in train] == list(range(1, iters + 1)),
          "expected train lines 1..%d" % iters)
    check(len(evals) == 2, "expected an evaluation before and after")
    before, after = s["eval_success_before"], s["eval_success_after"]
    sbefore, safter = s["eval_sampled_success_before"], s["eval_sampled_success_after"]
    print("held-out success greedy %.3f -> %.3f, sampled %.3f -> %.3f; training %.3f -> %.3f; "
          "%d segments verified, %d+%d env steps" % (
              before, after, sbefore, safter, s["train_success_first"], s["train_success_last"],
              s["segments_verified"], s["rollout_env_steps"], s["verify_env_steps"]))
    # the sampled success is the learning signal: over 17 runs of this scenario it ended at
    # 0.73-0.86 from 0.05. The greedy one must rise too, but a greedy bag-of-words policy is
    # brittle (one argmax loop fails a whole game): it ended anywhere in 0.25-0.89.
    check_learned(
        (safter >= sbefore + 0.4,
         "held-out success (sampled) %.3f -> %.3f: no clear learning" % (sbefore, safter)),
        (after >= before + 0.1,
         "held-out success (greedy) %.3f -> %.3f: no learning" % (before, after)))
    check(s["segments_verified"] > 0 and s["verify_env_steps"] > 0, "nothing was verified")
    check(s["malformed"] == 0 and s["groups"] == 8 * iters, "groups or malformed counts off")
    # the judge's last count is of the groups the learner took: the summary's, plus those of
    # groups the learner dropped as stale or duplicate (not of groups still on their way)
    judged = [int(n) for n in re.findall(r"\[judge[^]]*\] .*verified segments (\d+) \(in groups "
                                         r"the learner took\)", open(job.log.name).read())]
    check(judged, "no judge summary line")
    dropped = s["dropped_stale"] + s["dropped_duplicate"]
    print("verified segments: judge %d, summary %d (groups dropped %d)" % (
        judged[-1], s["segments_verified"], dropped))
    # A group the learner dropped as a duplicate was judged twice (a judge lease ran out on a
    # loaded machine), and the two judgements verify their own continuations: the judge may
    # have counted the other one, so the counts may differ by at most the segments of those
    # groups (prover.max_segments = 2 each), either way
    check(judged[-1] == s["segments_verified"] if dropped == 0 else
          abs(judged[-1] - s["segments_verified"]) <= 2 * dropped,
          "the judge counted %d verified segments, the summary %d (%d groups dropped)" % (
              judged[-1], s["segments_verified"], dropped))
    check(max(x["policy_lag_max"] for x in train) <= 2, "policy lag above learner.max_policy_lag")
    # the summary's training success: means of the first and the last 10 iterations
    first = sum(x["success_rate"] for x in train[:10]) / 10
    last = sum(x["success_rate"] for x in train[-10:]) / 10
    check(abs(s["train_success_first"] - first) < 1e-9 and abs(s["train_success_last"] - last) < 1e-9,
          "train_success_first/last %.4f/%.4f, metrics say %.4f/%.4f" % (
              s["train_success_first"], s["train_success_last"], first, last))
    check(os.path.exists(os.path.join(job.out, "checkpoint.safetensors")), "no final checkpoint")
    # the benchmark's numbers: ALFWorld's reward is 0/1, so the score is 100 x success; the
    # per-type successes cover the n_eval tasks and average to the overall success
    check(abs(s["eval_score_after"] - 100 * after) < 1e-9, "score %r, success %r" % (
        s["eval_score_after"], after))
    types = s["eval_success_by_type_after"]
    check(set(types) <= {"pick_and_place_simple", "look_at_obj_in_light",
                         "pick_clean_then_place_in_recep", "pick_heat_then_place_in_recep",
                         "pick_cool_then_place_in_recep", "pick_two_obj_and_place"},
          "task types %s" % sorted(types))
    check(sum(t["n"] for t in types.values()) == n_eval, "per-type counts %s" % types)
    check(abs(sum(t["n"] * t["success"] for t in types.values()) / n_eval - after) < 1e-9,
          "per-type successes %s do not average to %.3f" % (types, after))
    # the run's health is kept with its results: the broker's books, balanced per service
    books = s["broker"]
    check(books["fetched"] and books["conserved"] and not books["stale"],
          "broker books: %s" % books["line"])
    for name, svc in books["services"].items():
        check(svc["enqueued"] == svc["acked"] + svc["dropped"] + svc["in_flight"] + svc["queued"],
              "%s: books do not balance: %s" % (name, svc))
    learn = books["services"]["learn"]
    check(learn["acked"] >= 8 * iters and learn["dropped"] == 0,
          "learn service: %d acked, %d dropped for %d groups trained" % (
              learn["acked"], learn["dropped"], 8 * iters))
    check(any(x["kind"] == "broker" for x in m), "no broker line in metrics.jsonl")
    print(books["line"])


def scenario_faults(tmp):
    iters = 60 if SANITIZED else 160  # iterations; the kills come at iteration 10
    job = Job(os.path.join(tmp, "faults"), ["run.iterations=%d" % iters, "learner.eval_every=0",
                                            "cluster.actors=3", "cluster.verifiers=2"],
              free_port())
    try:
        wait_until(lambda: job.iteration() >= 10, 120, "iteration 10")
        # catch a verifier holding a lease: freeze one (SIGSTOP), let the broker take any
        # ack already on its way, and look; verify jobs take milliseconds, so sampling the
        # stats of a running verifier would race with its ack
        vpids = job.pids("prover-verifier")
        check(len(vpids) == 2, "expected 2 verifiers, found %s" % vpids)
        def frozen_with_lease():
            for pid in vpids:
                os.kill(pid, signal.SIGSTOP)
                time.sleep(0.15)
                st = job.stats()
                held = st and any(w["pid"] == pid and w["service"] == "verify" and
                                  w["in_flight"] > 0 for w in st["workers"])
                if held:
                    return pid
                os.kill(pid, signal.SIGCONT)
            return None
        vpid = wait_until(frozen_with_lease, 60, "a verifier holding a lease")
        apids = job.pids("prover-actor")
        check(len(apids) == 3, "expected 3 actors, found %s" % apids)
        os.kill(vpid, signal.SIGKILL)
        os.kill(apids[0], signal.SIGKILL)
        killed_at = job.iteration()
        print("killed verifier %d and actor %d at iteration %d" % (vpid, apids[0], killed_at))
        snaps = []
        def keep_stats():
            st = job.stats()
            if st:
                snaps.append(st)
            return job.proc.poll() is not None or job.iteration() >= iters - 10
        wait_until(keep_stats, 240, "the run to go on after the kills")
        check(job.wait(120) == 0, "cluster/launch failed after the kills")
    finally:
        job.kill()
    s = job.summary()
    check(s["iterations"] == iters,
          "the run stopped at %d of %d iterations" % (s["iterations"], iters))
    check(snaps, "no broker stats after the kills")
    last = snaps[-1]
    verify = service(last, "verify")
    print("verify counters after the kills: %s" % verify["counters"])
    check(verify["counters"]["requeued"] + verify["counters"]["expired"] >= 1,
          "the dead verifier's lease was not re-queued")
    for name in ("judge", "verify", "learn"):
        svc = service(last, name)
        check(svc["dropped"]["max_attempts"] == 0, "%s dropped a job" % name)
        c = svc["counters"]
        # every job is acked, or still queued / leased: nothing vanished inside the broker
        check(c["enqueued"] == c["acked"] + svc["queued_msgs"] + svc["inflight_msgs"],
              "%s: enqueued %d != acked %d + queued %d + in flight %d" % (
                  name, c["enqueued"], c["acked"], svc["queued_msgs"], svc["inflight_msgs"]))
    groups = sum(x["groups"] for x in job.metrics() if x["kind"] == "train")
    check(groups == s["groups"] == iters * 8,
          "trained groups %d, summary %d" % (groups, s["groups"]))
    print("duplicates refused by the learner: %d" % s["dropped_duplicate"])


def scenario_resume(tmp):
    a = Job(os.path.join(tmp, "a"), ["run.iterations=30", "learner.eval_every=0"], free_port())
    check(a.wait(200) == 0, "first run failed")
    last_a = [x for x in a.metrics() if x["kind"] == "train"][-1]
    ckpt = os.path.join(a.out, "checkpoint.safetensors")
    check(os.path.exists(ckpt), "no checkpoint after the first run")
    b = Job(os.path.join(tmp, "b"), ["run.iterations=45", "learner.eval_every=0",
                                     "learner.resume=" + ckpt], free_port())
    check(b.wait(60) == 0, "resumed run failed")
    train_b = [x for x in b.metrics() if x["kind"] == "train"]
    print("first run ended at iteration %d v%d; resumed run went %d..%d from v%d" % (
        last_a["iteration"], last_a["policy_version"], train_b[0]["iteration"],
        train_b[-1]["iteration"], train_b[0]["policy_version"]))
    check([x["iteration"] for x in train_b] == list(range(31, 46)),
          "the resumed run did not continue at iteration 31")
    check(train_b[0]["policy_version"] == last_a["policy_version"] + 1,
          "the resumed run did not continue the policy version")
    sb = b.summary()
    check(sb["iterations"] == 45, "summary iterations off")
    # the resumed run continues the first one's counters (from the metrics.jsonl beside the
    # checkpoint): environment steps and wall time go on, the summary's means cover the run
    train_a = [x for x in a.metrics() if x["kind"] == "train"]
    # (the first resumed batch may hold no verified segment - no eligible group, or a busy
    # machine's verification still running - so the verification count may stand still, but
    # a restarted count would fall below the first run's)
    for key in ("cum_rollout_env_steps", "cum_verify_env_steps", "wall_s"):
        ok = (train_b[0][key] >= last_a[key] if key == "cum_verify_env_steps"
              else train_b[0][key] > last_a[key])
        check(ok, "%s restarted: %s after %s" % (key, train_b[0][key], last_a[key]))
    check(sb["rollout_env_steps"] == train_b[-1]["cum_rollout_env_steps"] > last_a["cum_rollout_env_steps"],
          "summary rollout steps do not continue the first run's")
    last = sum(x["success_rate"] for x in train_b[-10:]) / 10
    first = sum(x["success_rate"] for x in train_a[:10]) / 10
    check(abs(sb["train_success_last"] - last) < 1e-9 and abs(sb["train_success_first"] - first) < 1e-9,
          "resumed run's train_success_first/last off: %.4f/%.4f, metrics say %.4f/%.4f" % (
              sb["train_success_first"], sb["train_success_last"], first, last))
    # every counter covers both legs (issue 15, item 7): groups, segments, refusals
    sa = a.summary()
    both = train_a + train_b
    check(sb["groups"] == 8 * 45 == sum(x["groups"] for x in both),
          "summary groups %d, expected %d over both legs" % (sb["groups"], 8 * 45))
    check(sb["segments_verified"] == sum(x["segments_verified"] for x in both),
          "summary segments_verified %d, the two legs' lines sum to %d" % (
              sb["segments_verified"], sum(x["segments_verified"] for x in both)))
    for key in ("dropped_stale", "dropped_duplicate", "malformed"):
        check(sb[key] >= sa[key] and train_b[-1][key] == sb[key],
              "%s: first leg %d, resumed summary %d" % (key, sa[key], sb[key]))
    check(sb["outcome"] == "completed" and sb["iterations_planned"] == 45, "outcome off")
    # the actors go on with the tasks an uninterrupted run would have played next (issue 15,
    # item 3): actor i of A resumes at the group after the last one the learner received,
    # task i + A n, not at task 0
    cursor = ckpt_meta(ckpt)["task_cursor"]
    n_actors, nexts = cursor.split()
    n_actors = int(n_actors.split("=")[1])
    nexts = [int(x) for x in nexts.split("=")[1].split(",") if x]
    check(n_actors == 2 and len(nexts) == 2 and min(nexts) > 0,
          "first run's task cursor %r" % cursor)
    want = sorted((n, i + n_actors * n) for i, n in enumerate(nexts))
    got = sorted((int(l.split("at group ")[1].split()[0]),
                  int(l.split("(task ")[1].split(")")[0]))
                 for l in open(b.log.name).read().splitlines()
                 if "resuming the task schedule at group" in l)
    print("task cursor %s: the resumed actors start at (group, task) %s" % (cursor, got))
    check(got == want, "resumed actors started at %s, expected %s" % (got, want))
    # a resume with nothing to do is refused, naming run.iterations, and leaves the summary
    with open(os.path.join(b.out, "summary.json")) as f:
        before = f.read()
    ckpt_b = os.path.join(b.out, "checkpoint.safetensors")
    c = Job(b.out, ["run.iterations=45", "learner.eval_every=0", "learner.resume=" + ckpt_b],
            free_port())
    check(c.wait(200) == 1, "a resume at run.iterations should fail")
    log = open(c.log.name).read()
    check("run.iterations" in log and "nothing to do" in log,
          "the refusal does not name run.iterations")
    with open(os.path.join(b.out, "summary.json")) as f:
        check(f.read() == before, "the refused resume changed the summary")
    print("a resume at iteration 45 of 45 was refused: %s" % [
        l for l in log.splitlines() if "nothing to do" in l][0].strip())


def scenario_addpool(tmp):
    port = free_port()
    job = Job(os.path.join(tmp, "pool"), ["run.iterations=40", "learner.eval_every=0",
                                          "cluster.verifiers=0", "prover.verify_timeout_ms=100000",
                                          "broker.lease_ms=20000"], port)
    pool = None
    try:
        wait_until(lambda: job.iteration() >= 2, 120, "iteration 2")
        st = job.stats()
        check(st and service(st, "verify")["live_workers"] == 0, "a verifier before the pool")
        plog = open(os.path.join(job.out, "pool.log"), "w")
        pool = subprocess.Popen(
            [os.path.join(SRC, "cluster", "add-verifiers"), "1", "--build", BUILD] + job.args,
            stdout=plog, stderr=subprocess.STDOUT, cwd=SRC, start_new_session=True)
        check(job.wait(240) == 0, "the run failed")
    finally:
        job.kill()
        wait_pool_end(pool, "the added pool")
    s = job.summary()
    with open(os.path.join(job.out, "pool.log")) as f:
        pool_log = f.read()
    print("segments verified by the added pool: %d; its last line: %s" % (
        s["segments_verified"], pool_log.strip().splitlines()[-1] if pool_log.strip() else ""))
    check(s["segments_verified"] > 0 and s["verify_env_steps"] > 0,
          "the added pool verified nothing")
    vers = [int(w.split("policy v")[1].split()[0]) for w in pool_log.splitlines()
            if "policy v" in w]
    check(vers and max(vers) > 1, "the pool never received weights newer than v1")


def scenario_addactors(tmp):
    job = Job(os.path.join(tmp, "actors"), ["run.iterations=40", "learner.eval_every=0",
                                            "cluster.actors=1", "actor.window=1"], free_port())
    pool = None
    snaps = []
    try:
        wait_until(lambda: job.iteration() >= 2, 120, "iteration 2")
        plog = open(os.path.join(job.out, "pool.log"), "w")
        pool = subprocess.Popen(
            [os.path.join(SRC, "cluster", "add-actors"), "2", "--build", BUILD] + job.args,
            stdout=plog, stderr=subprocess.STDOUT, cwd=SRC, start_new_session=True)
        def pool_in():
            st = job.stats()
            if st:
                snaps.append(st)
            return st and st.get("actor_index_next", 0) >= 3 and job.proc.poll() is None
        wait_until(pool_in, 120, "the added actors to register")
        table = subprocess.run([os.path.join(BIN, "prover-stats"),
                                "broker.endpoint=tcp://127.0.0.1:%d" % job.port],
                               capture_output=True, text=True, timeout=10).stdout
        check("recent joins and leaves" in table and
              re.search(r"joined: actor 2 \(rank 1\) on host \S+, pid \d+, client", table),
              "prover-stats does not list the added actors' joins:\n" + table)
        def keep_stats():
            st = job.stats()
            if st:
                snaps.append(st)
            return job.proc.poll() is not None
        wait_until(keep_stats, 240, "the run to end")
        check(job.wait(60) == 0, "the run failed")
    finally:
        job.kill()
        wait_pool_end(pool, "the added actors")
    check(pool.returncode == 0, "the pool's mpirun exited %d" % pool.returncode)
    s = job.summary()
    pool_log = open(os.path.join(job.out, "pool.log")).read()
    log = open(job.log.name).read()
    # each added actor: its index past the job's, weights from the relay, groups taken
    taken = {}
    for idx in (1, 2):
        check(re.search(r"actor %d \(\d of 2 in this job, weights from the relay\)" % idx, pool_log),
              "no added actor %d in the pool's log" % idx)
    for m in re.finditer(r"\[actor-(\d) [^]]*\] whole run: groups (\d+) sent \((\d+) taken.*"
                         r"policy v(\d+)", pool_log):
        taken[int(m.group(1))] = (int(m.group(3)), int(m.group(4)))
    print("added actors (pool index: groups taken, last policy version): %s" % taken)
    check(len(taken) == 2 and all(t > 0 and v > 1 for t, v in taken.values()),
          "the added actors' groups were not taken, or they never got newer weights: %s" % taken)
    check(re.search(r"the broker shut down [\d.]+ s ago and has not come back", pool_log),
          "the pool did not stop by itself")
    # no group id collided: the broker saw no second submit of an id, unless an actor
    # reconnected (a busy machine: its producer then resubmits what was pending), which shows
    # as more joins of that process than its clients (job actors: a producer; added actors:
    # a producer and a relay subscriber)
    joins = {}
    for idx, pid in re.findall(r"joined: actor (\d+) \(rank \d+\) on host \S+, pid (\d+), client", log):
        joins[(int(idx), pid)] = joins.get((int(idx), pid), 0) + 1
    reconnected = any(n > (1 if idx == 0 else 2) for (idx, _), n in joins.items())
    last = snaps[-1]
    dups = service(last, "judge")["counters"]["duplicates"]
    print("judge submits of a known id: %d; actor joins %s" % (dups, joins))
    check(dups == 0 or reconnected, "judge: %d duplicate job ids without a reconnect: ids "
          "collide" % dups)
    check(s["groups"] == 8 * 40, "groups %d" % s["groups"])
    # joins and leaves: in the broker's log and in prover-stats
    joins = set(re.findall(r"joined: (\w+) (\d+) \((rank \d+|no MPI)\) on host \S+, pid \d+", log))
    print("joins in the broker log: %s" % sorted(joins))
    for want in (("actor", "0", "rank 4"), ("actor", "1", "rank 0"), ("actor", "2", "rank 1"),
                 ("learner", "0", "rank 1"), ("verifier", "0", "rank 3"), ("judge", "0", "rank 2")):
        check(want in joins, "no join line for %s %s (%s)" % want)
    # the learner leaves before it ends the run (the job's actors may still be connected
    # when the broker stops)
    check(re.search(r"left: learner 0 \(rank 1\) on host \S+, pid \d+, worker of learn: "
                    r"disconnected", log), "no leave line for the learner")
    events = [e for st in snaps for e in st["events"]]
    check(any(e["event"] == "joined" and e["role"] == "actor" and e["index"] == 2 and
              e["rank"] == 1 for e in events), "prover-stats shows no join of added actor 2")


def scenario_crash(tmp):
    with socket.socket() as taken:
        port = free_port()
        taken.bind(("127.0.0.1", port))
        taken.listen()
        t0 = time.time()
        job = Job(os.path.join(tmp, "noport"), ["run.iterations=5"], port)
        rc = job.wait(60)
        print("port taken: launch exit %d after %.1f s" % (rc, time.time() - t0))
        check(rc == 1, "cluster/launch should fail when the broker cannot bind, exit %d" % rc)
        log = open(job.log.name).read()
        check("Address already in use" in log and "could not start" in log,
              "the log does not say the broker could not bind")
    job = Job(os.path.join(tmp, "crash"), ["run.iterations=100000", "learner.eval_every=0"],
              free_port())
    try:
        wait_until(lambda: job.iteration() >= 30, 120, "iteration 30")
        lpids = job.pids("prover-learner")
        check(len(lpids) == 1, "expected one learner, found %s" % lpids)
        os.kill(lpids[0], signal.SIGKILL)
        t0 = time.time()
        rc = job.wait(90)
        print("launch exit %d, %.1f s after the learner died" % (rc, time.time() - t0))
        check(rc == 1, "cluster/launch should fail when the learner dies, exit %d" % rc)
        check(time.time() - t0 < 25 * SCALE, "the job took more than %.0f s to stop" % (25 * SCALE))
        log = open(job.log.name).read()
        check("the learner is gone without ending the run" in log,
              "the broker did not say why it stopped the job")
        check("it was learner (rank 1, host %s, pid %d)" % (socket.gethostname()[:63], lpids[0])
              in log, "the broker did not name the lost learner's rank, host and pid")
        check(log.count("the broker ended the job") >= 4,
              "not every role (judge, verifier, 2 actors) logged the broker's stop")
    finally:
        job.kill()
    left = [p for exe in ("prover-actor", "prover-judge", "prover-verifier", "prover-broker")
            for p in job.pids(exe)]
    check(not left, "role processes left behind: %s" % left)
    check(not os.path.exists(os.path.join(job.out, "summary.json")), "a summary without a learner")


def check_failed(job, t0, rc, words):
    """The job ended as a failure: launch exit 1, summary outcome "failed" naming `words`."""
    print("launch exit %d, %.1f s after the fault" % (rc, time.time() - t0))
    check(rc == 1, "cluster/launch should exit 1 for a failed run, exit %d" % rc)
    s = job.summary()
    print("summary: outcome %s after %d of %d iterations: %s" % (
        s["outcome"], s["iterations"], s["iterations_planned"], s["reason"]))
    check(s["outcome"] == "failed", "outcome %s, expected failed" % s["outcome"])
    for w in words:
        check(w in s["reason"], "the reason does not name %r: %s" % (w, s["reason"]))
    log = open(job.log.name).read()
    check("launch: the run failed: " in log, "cluster/launch did not say the run failed")
    left = [p for exe in ("prover-actor", "prover-judge", "prover-verifier", "prover-broker",
                          "prover-learner") for p in job.pids(exe)]
    check(not left, "role processes left behind: %s" % left)


# the loss watches fire after 5 s without the role; the limits below are hang guards
LOST = ["run.iterations=100000", "learner.eval_every=0", "broker.role_timeout_s=5",
        "run.time_limit_s=0"]


def scenario_lost(tmp):
    host = socket.gethostname()[:63]
    for victim in ("judge", "actors", "broker"):
        job = Job(os.path.join(tmp, victim), LOST + ["cluster.actors=2"], free_port())
        try:
            wait_until(lambda: job.iteration() >= 2, 180, "iteration 2")
            exe = {"judge": "prover-judge", "actors": "prover-actor",
                   "broker": "prover-broker"}[victim]
            pids = job.pids(exe)
            check(len(pids) == (2 if victim == "actors" else 1),
                  "expected the %s's processes, found %s" % (victim, pids))
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            t0 = time.time()
            print("%s: killed %s at iteration %d" % (victim, pids, job.iteration()))
            rc = job.wait(180)
        finally:
            job.kill()
        role = {"judge": "judge", "actors": "actor", "broker": "broker"}[victim]
        # the reason names the process: its role, rank, host and (one of) the pid(s)
        words = ["%s (rank " % role, "host %s" % host]
        reason = job.summary()["reason"]
        check(any("pid %d)" % p in reason for p in pids), "no killed pid %s in: %s" % (
            pids, reason))
        check_failed(job, t0, rc, words + {"judge": ["the judge is gone"],
                                           "actors": ["every actor is gone"],
                                           "broker": ["has not answered"]}[victim])


def scenario_stall(tmp):
    # the watches are off and the time limit is far: only the stall check can end this run
    job = Job(os.path.join(tmp, "stall"), ["run.iterations=100000", "learner.eval_every=0",
                                           "broker.role_timeout_s=0", "run.stall_timeout_s=5",
                                           "run.time_limit_s=3600"], free_port())
    frozen = []
    try:
        wait_until(lambda: job.iteration() >= 2, 180, "iteration 2")
        frozen = job.pids("prover-actor")
        check(len(frozen) == 2, "expected 2 actors, found %s" % frozen)
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        t0 = time.time()
        print("froze actors %s at iteration %d" % (frozen, job.iteration()))
        # the learner writes its summary, then the frozen actors must run to take the stop
        wait_until(lambda: os.path.exists(os.path.join(job.out, "summary.json")), 180,
                   "the learner to end the stalled run")
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
        rc = job.wait(120)
    finally:
        for pid in frozen:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        job.kill()
    check_failed(job, t0, rc, ["no group arrived", "run.stall_timeout_s"])
    # a run ended by its time limit says so: not "completed", not "failed"
    job = Job(os.path.join(tmp, "limit"), ["run.iterations=100000", "learner.eval_every=0",
                                           "run.time_limit_s=3"], free_port())
    check(job.wait(180) == 0, "a time-limited run should exit 0")
    s = job.summary()
    print("time limit: outcome %s after %d of %d iterations: %s" % (
        s["outcome"], s["iterations"], s["iterations_planned"], s["reason"]))
    check(s["outcome"] == "time_limit" and "run.time_limit_s" in s["reason"] and
          s["iterations"] < s["iterations_planned"], "the summary does not say time_limit")


def scenario_gigpo(tmp):
    def check_gigpo_run(job, iterations):
        s = job.summary()
        train = [x for x in job.metrics() if x["kind"] == "train"]
        check(s["adv_estimator"] == "gigpo" and s["judge"] == "none", "not a GiGPO run")
        check(len(train) == iterations and s["groups"] == 8 * iterations and s["malformed"] == 0,
              "groups or malformed counts off")
        check(s["verify_env_steps"] == 0 and s["segments_verified"] == 0 and
              sum(x["proposals"] for x in train) == 0, "something was proposed or verified")
        log = open(job.log.name).read()
        check("[verifier" not in log, "a verifier was started")
        check("[judge" not in log, "a judge was started")
        # every group's trajectories start from the same observation and state, so step
        # groups hold more than one step; a group's steps are never all one anchor state
        sizes = [x["gigpo_step_group_size"] for x in train]
        steps_per_group = [x["episode_len"] * x["trajectories"] / x["groups"] for x in train]
        check(all(z is not None and 1 < z < n for z, n in zip(sizes, steps_per_group)),
              "step-group sizes %s" % sizes[:5])
        return s, sizes
    iters, n_eval = LEARN_ITERS, LEARN_EVAL
    job = Job(os.path.join(tmp, "gigpo"), ["algorithm.adv_estimator=gigpo",
                                           "run.iterations=%d" % iters,
                                           "learner.eval_every=%d" % iters,
                                           "learner.eval_tasks=%d" % n_eval], free_port())
    check(job.wait(120) == 0, "cluster/launch failed")
    s, sizes = check_gigpo_run(job, iters)
    before, after = s["eval_success_before"], s["eval_success_after"]
    sbefore, safter = s["eval_sampled_success_before"], s["eval_sampled_success_after"]
    print("gigpo (observation anchors): held-out success greedy %.3f -> %.3f, sampled %.3f -> "
          "%.3f; mean step-group size %.2f" % (before, after, sbefore, safter,
                                               sum(sizes) / len(sizes)))
    # over 8 runs of these settings the sampled success ended at 0.81-0.95 from 0.01-0.05
    check_learned((safter >= sbefore + 0.4,
                   "held-out success (sampled) %.3f -> %.3f: no clear learning" % (
                       sbefore, safter)))
    state = Job(os.path.join(tmp, "gigpo-state"), ["algorithm.adv_estimator=gigpo",
                                                   "algorithm.gigpo_anchor=state",
                                                   "run.iterations=20", "learner.eval_every=0"],
                free_port())
    check(state.wait(120) == 0, "cluster/launch failed (state anchors)")
    _, sizes = check_gigpo_run(state, 20)
    print("gigpo (state anchors): mean step-group size %.2f" % (sum(sizes) / len(sizes)))


def scenario_seeds(tmp):
    """PGPO (groups of 8), SPO++ with groups of one, TRIAGE and VICT, 15 iterations each: no
    judge, no verifier; PGPO's anchor groups are shared; SPO++'s per-task values are in the
    learner's checkpoint and a resumed run starts from them; VICT's rows all carry atom
    traces and some go along a proof."""
    import struct
    for est, extra in (("pgpo", []), ("spopp", ["actor.group_size=1"]), ("triage", []),
                       ("vict", [])):
        job = Job(os.path.join(tmp, est), ["algorithm.adv_estimator=" + est, "run.iterations=15",
                                           "learner.eval_every=0"] + extra, free_port())
        check(job.wait(120) == 0, "cluster/launch failed (%s)" % est)
        s = job.summary()
        train = [x for x in job.metrics() if x["kind"] == "train"]
        check(s["adv_estimator"] == est and s["judge"] == "none", "not a %s run" % est)
        check(len(train) == 15 and s["malformed"] == 0, "%s: iterations or malformed off" % est)
        check(s["verify_env_steps"] == 0 and s["segments_verified"] == 0, "%s verified" % est)
        if est == "pgpo":
            sizes = [x["gigpo_step_group_size"] for x in train]
            check(all(z is not None and z > 1 for z in sizes), "pgpo step groups %s" % sizes[:5])
            print("pgpo: mean anchor-group size %.2f" % (sum(sizes) / len(sizes)))
        elif est == "triage":
            print("triage: training success %.3f -> %.3f" % (train[0]["success_rate"],
                                                            train[-1]["success_rate"]))
        elif est == "vict":
            # the atom traces came over the wire: no row lacks them, and some batch had a
            # success whose proof is a part of its steps
            untraced = [x["vict_rows_untraced"] for x in train]
            check(all(u == 0 for u in untraced), "vict: rows without traces %s" % untraced[:5])
            shares = [x["vict_proof_share"] for x in train if x["vict_proof_share"] is not None]
            check(shares and all(0 < z <= 1 for z in shares), "vict proof shares %s" % shares[:5])
            check(sum(x["vict_rows_proof"] for x in train) > 0, "vict: no row along a proof")
            print("vict: %d batches with proofs, mean proof share %.2f, success %.3f -> %.3f"
                  % (len(shares), sum(shares) / len(shares), train[0]["success_rate"],
                     train[-1]["success_rate"]))
        else:
            with open(os.path.join(job.out, "checkpoint.safetensors"), "rb") as f:
                n = struct.unpack("<Q", f.read(8))[0]
                head = json.loads(f.read(n))
            tasks = [x["spopp_tasks"] for x in train]
            check(all(a is not None and a > 0 for a in tasks) and tasks == sorted(tasks),
                  "spopp_tasks %s" % tasks[:5])
            count = int(head["__metadata__"].get("spopp.count", "0"))
            check(count > 0 and head["spopp.keys"]["shape"] == [count],
                  "no SPO++ table in the checkpoint")
            print("spopp (G = 1): %d task values in the checkpoint" % count)
            # a resumed run starts from the saved table: at least the saved tasks, more than a
            # fresh run's first batch has
            ckpt = os.path.join(job.out, "checkpoint.safetensors")
            res = Job(os.path.join(tmp, "spopp-resume"),
                      ["algorithm.adv_estimator=spopp", "actor.group_size=1", "run.iterations=17",
                       "learner.eval_every=0", "learner.resume=" + ckpt], free_port())
            check(res.wait(120) == 0, "cluster/launch failed (spopp resumed)")
            first = [x for x in res.metrics() if x["kind"] == "train"][0]
            check(first["iteration"] == 16 and first["spopp_tasks"] > tasks[0] and
                  first["spopp_tasks"] >= count,
                  "the resumed run did not start from the saved values: %s tasks at iteration "
                  "%d (%d saved)" % (first["spopp_tasks"], first["iteration"], count))
            print("spopp resumed: %d task values at iteration 16" % first["spopp_tasks"])


LM = ["policy.kind=transformer", "policy.layers=1", "policy.hidden_size=32", "policy.heads=2",
      "policy.kv_heads=1", "policy.intermediate_size=64", "policy.vocab_size=300",
      "policy.max_new_tokens=8", "policy.max_context=512", "env.max_steps=8",
      "learner.batch_groups=2", "actor.group_size=4", "learner.eval_every=0"]


def scenario_lm(tmp):
    a = Job(os.path.join(tmp, "a"), LM + ["run.iterations=4", "learner.checkpoint_every=2"],
            free_port())
    check(a.wait(200) == 0, "cluster/launch failed")
    train = [x for x in a.metrics() if x["kind"] == "train"]
    check([x["iteration"] for x in train] == [1, 2, 3, 4], "expected train lines 1..4")
    s = a.summary()
    check(s["malformed"] == 0 and s["groups"] == 2 * 4, "groups %d, malformed %d" % (
        s["groups"], s["malformed"]))
    steps = sum(x["trajectories"] * x["episode_len"] for x in train)
    tokens = sum(x["action_tokens"] for x in train)
    mm = [x["logprob_mismatch_max"] for x in train if x["logprob_mismatch_max"] is not None]
    print("%d action tokens in %d steps; mismatch max per iteration %s; invalid action rate %s" % (
        tokens, steps, mm, [x["invalid_action_rate"] for x in train]))
    check(tokens > steps, "the steps carried one token each: not a language model's")
    check(train[-1]["cum_rollout_tokens"] == tokens,
          "cum_rollout_tokens %d is not the action tokens summed (%d)" % (
              train[-1]["cum_rollout_tokens"], tokens))
    check(train[-1]["total_tokens"] == tokens + train[-1]["cum_verify_tokens"],
          "total_tokens is not rollouts + verification")
    check(mm and sum(x["mismatch_tokens"] for x in train) > 0,
          "no token acted with the learner's version was compared")
    check(max(mm) < 1e-4, "rollout/training log-prob mismatch %g" % max(mm))
    ckpt = os.path.join(a.out, "checkpoint")
    for f in ("config.json", "model.safetensors", "tokenizer.json", "trainer_state.safetensors"):
        check(os.path.exists(os.path.join(ckpt, f)), "no %s in the checkpoint directory" % f)
    with open(os.path.join(ckpt, "config.json")) as f:
        hf = json.load(f)
    check(hf.get("hidden_size") == 32 and hf.get("num_hidden_layers") == 1, "config.json %s" % hf)
    b = Job(os.path.join(tmp, "b"), LM + ["run.iterations=6", "learner.resume=" + ckpt],
            free_port())
    check(b.wait(60) == 0, "resumed run failed")
    train_b = [x for x in b.metrics() if x["kind"] == "train"]
    check([x["iteration"] for x in train_b] == [5, 6], "the resumed run did not continue at 5")
    check(train_b[0]["policy_version"] == train[-1]["policy_version"] + 1,
          "the resumed run did not continue the policy version")
    check(train_b[0]["cum_rollout_tokens"] == train[-1]["cum_rollout_tokens"] +
          train_b[0]["action_tokens"], "the resumed run did not continue the token counts")


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("learn", "faults", "resume", "addpool",
                                                 "addactors", "crash", "lost", "stall", "gigpo",
                                                 "seeds", "lm"):
        print(__doc__)
        return 2
    if not shutil.which("mpirun"):
        print("skip: no mpirun")
        return 77
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    tmp = tempfile.mkdtemp(prefix="pv-pipeline-")
    try:
        globals()["scenario_" + sys.argv[1]](tmp)
    except Fail as e:
        print("FAIL:", e)
        for log in sorted(glob.glob(os.path.join(tmp, "*", "*.log"))):
            with open(log) as f:
                lines = f.read().splitlines()
            print("---- last lines of", log)
            print("\n".join(lines[-25:]))
        return 1
    finally:
        if not os.environ.get("PV_KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)
    print("PASS", sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
