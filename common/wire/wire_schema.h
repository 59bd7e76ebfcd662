/* wire_schema.h - every prover message, described once (DESIGN.md sections 2 and 5).
 *
 * This file is the single source of the wire schema. From these lists follow the C structs
 * (wire.h), the descriptor tables that drive encode, decode and validation (wire_desc.c),
 * and the schema documents docs/wire-schema.md and docs/wire-schema.json (wire_doc.c,
 * printed by `prover-schema`). A test fails when the committed documents differ from what
 * this file generates.
 *
 * Field lines read X(T, KIND, SUB, name, MAX, FLAGS, RULE, "doc"):
 *   T      the struct being described (passed through; do not edit)
 *   KIND   U8 U32 U64 F32 BOOL STR BIN OBJ ARR_U32 ARR_F32 ARR_STR ARR_OBJ
 *   SUB    for OBJ / ARR_OBJ the struct name of the element, else `_`
 *   name   C member and MessagePack map key (arrays also get a count member n_<name>)
 *   MAX    U8/U32/U64: largest allowed value (0 = the type's maximum);
 *          STR: most bytes (0 = pv_wire_limits_t.max_str_bytes);
 *          BIN: most bytes (0 = pv_wire_limits_t.max_msg_bytes);
 *          ARR_*: most elements (must be > 0); F32, BOOL, OBJ: 0
 *   FLAGS  REQ (the key must be present) or OPT (may be absent: decodes as zero / empty)
 *   RULE   NONE, or a check against another field of the same struct:
 *          SAME_LEN("a")  this array has as many elements as array a
 *          AT_MOST("f")   this integer is <= integer field f
 *          XXH3_OF("b")   this u64 is XXH3-64 (seed 0) of bin b (checked when b is non-empty)
 *          ELEMS_OF("b")  bin b is empty or holds exactly this many 4-byte elements
 *          ONE_OF("x|y")  this string is one of the '|'-separated words
 *
 * Compatibility rules: message type ids are append-only and never reused; changing,
 * adding or removing any field of any message bumps PV_WIRE_VERSION (decoders reject
 * other versions with PV_ERR_VERSION). Structs are listed in dependency order.
 */
#ifndef PV_WIRE_SCHEMA_H
#define PV_WIRE_SCHEMA_H

/* Envelope constants: {"pv": PV_WIRE_MAGIC, "ver": PV_WIRE_VERSION, "type": id, "body": {}} */
#define PV_WIRE_MAGIC   0x50565731u /* "PVW1" */
#define PV_WIRE_VERSION 12u

/* ---- shared pieces ------------------------------------------------------------------- */

#define PV_WIRE_FIELDS_env(X, T)                                                                   \
    X(T, U8, _, kind, 0, REQ, NONE,                                                                \
      "environment family (pv_env_kind_t): 1 = alfworld, 2 = webshop, 3 = searchqa; receivers "    \
      "reject kinds they do not know")                                                             \
    X(T, STR, _, name, 64, REQ, NONE, "environment name as configured, e.g. \"alfworld\"")

#define PV_WIRE_FIELDS_task(X, T)                                                                  \
    X(T, U8, _, split, 1, REQ, NONE, "task split (pv_env_split_t): 0 = train, 1 = test")           \
    X(T, U64, _, task_id, 0, REQ, NONE, "index into the split, or the generator's task id")        \
    X(T, U64, _, seed, 0, REQ, NONE, "seed that fixes any randomness inside the episode")

/* ---- 1 ROLLOUT_GROUP ----------------------------------------------------------------- */

#define PV_WIRE_FIELDS_step(X, T)                                                                  \
    X(T, STR, _, obs, 0, REQ, NONE, "observation text the action was chosen on")                   \
    X(T, STR, _, action, 65536, REQ, NONE, "action text sent to the environment")                  \
    X(T, ARR_STR, _, candidates, 1024, REQ, NONE,                                                  \
      "admissible actions offered to the policy at this step")                                     \
    X(T, ARR_U32, _, action_tokens, 8192, REQ, NONE,                                               \
      "action token ids; for the candidate-scoring policy one token: the index of the chosen "     \
      "candidate")                                                                                 \
    X(T, ARR_F32, _, behaviour_logprobs, 8192, REQ, SAME_LEN("action_tokens"),                     \
      "log-probability of each action token under the behaviour policy (natural log)")             \
    X(T, U64, _, policy_version, 0, REQ, NONE, "policy version that chose this action")            \
    X(T, F32, _, reward, 0, REQ, NONE, "reward of this transition")                                \
    X(T, BOOL, _, refused, 0, OPT, NONE,                                                           \
      "the environment did not accept the action (\"Nothing happens.\"): never a segment "         \
      "boundary")                                                                                  \
    X(T, BOOL, _, done, 0, REQ, NONE, "the episode ended with this step")                          \
    X(T, BIN, _, state, 16777216, OPT, NONE,                                                       \
      "saved environment state before this step's action (pv_env_save bytes); may be empty")       \
    X(T, U64, _, state_key, 0, OPT, NONE,                                                          \
      "pv_env_state_key of the state before this step's action (equal keys = equal states, "       \
      "whatever the step count); 0 = not recorded")                                                \
    X(T, ARR_U32, _, goal_made, 48, OPT, NONE,                                                     \
      "atom trace (pv_env_trace_t): ids of the task's goal atoms this step made true")             \
    X(T, ARR_U32, _, goal_unmade, 48, OPT, NONE,                                                   \
      "atom trace: ids of the goal atoms this step made false")                                    \
    X(T, ARR_U32, _, deps, 8, OPT, NONE,                                                           \
      "atom trace: earlier steps (ascending, distinct, counted from the episode's reset) that "    \
      "last established a fact this step's preconditions needed")                                  \
    X(T, U32, _, trace_dropped, 255, OPT, NONE,                                                    \
      "atom trace: atoms or edges beyond the bounds (8 each) left out of this step's record")

#define PV_WIRE_FIELDS_trajectory(X, T)                                                            \
    X(T, F32, _, reward, 0, REQ, NONE,                                                             \
      "episode outcome R (ALFWorld/SearchQA 0 or 1, WebShop [0,1])")                               \
    X(T, BOOL, _, success, 0, REQ, NONE, "the episode ended in success")                           \
    X(T, ARR_OBJ, step, steps, 4096, REQ, NONE, "the steps in order (C: n_steps of them)")         \
    X(T, U64, _, final_state_key, 0, OPT, NONE,                                                    \
      "pv_env_state_key of the state after the last step; 0 = not recorded")                       \
    X(T, BOOL, _, traced, 0, OPT, NONE,                                                            \
      "the steps carry atom traces (goal_made, goal_unmade, deps; VICT); false = the "             \
      "environment records none")

#define PV_WIRE_FIELDS_rollout_group(X, T)                                                         \
    X(T, U64, _, group_id, 0, REQ, NONE, "id unique per actor run, chosen by the actor")           \
    X(T, U32, _, actor_id, 0, REQ, NONE, "actor that produced the group")                          \
    X(T, OBJ, env, env, 0, REQ, NONE, "environment family")                                        \
    X(T, OBJ, task, task, 0, REQ, NONE, "the task all trajectories played")                        \
    X(T, STR, _, task_text, 65536, REQ, NONE, "the goal in words")                                 \
    X(T, U64, _, policy_version, 0, REQ, NONE, "oldest policy version used in the group")          \
    X(T, U64, _, created_unix_ms, 0, REQ, NONE,                                                    \
      "wall-clock time the group was completed (ms since 1970)")                                   \
    X(T, ARR_OBJ, trajectory, trajectories, 1024, REQ, NONE, "the G trajectories of the group")

/* ---- 2 VERIFY_JOB, 3 VERIFY_RESULT --------------------------------------------------- */

#define PV_WIRE_FIELDS_verify_job(X, T)                                                            \
    X(T, U64, _, job_id, 0, REQ, NONE, "id chosen by the judge, echoed in the result")             \
    X(T, U64, _, group_id, 0, REQ, NONE, "rollout group the segment belongs to")                   \
    X(T, U32, _, segment_id, 0, REQ, NONE, "segment index within the group's proposals")           \
    X(T, U8, _, side, 1, REQ, NONE,                                                                \
      "0 = the state before the segment (s_t0), 1 = the state after it (s_t1)")                    \
    X(T, OBJ, env, env, 0, REQ, NONE, "environment family")                                        \
    X(T, OBJ, task, task, 0, REQ, NONE, "task of the trajectory")                                  \
    X(T, STR, _, task_text, 65536, REQ, NONE, "the goal in words")                                 \
    X(T, BIN, _, state, 16777216, REQ, NONE,                                                       \
      "saved environment state to restore (pv_env_save bytes)")                                    \
    X(T, ARR_STR, _, history, 4096, REQ, NONE,                                                     \
      "recent observation/action texts forming the policy's context at that state, oldest first")  \
    X(T, U32, _, k, 4096, REQ, NONE, "number of continuations to sample")                          \
    X(T, U64, _, policy_version, 0, REQ, NONE, "minimum policy version the verifier must use")     \
    X(T, U32, _, max_steps, 0, REQ, NONE, "step budget per continuation")                          \
    X(T, U64, _, seed, 0, REQ, NONE, "seed for the continuations' sampling")                       \
    X(T, BOOL, _, want_continuations, 0, OPT, NONE,                                                \
      "send the continuations back in the result (prover.reuse_continuations)")

#define PV_WIRE_FIELDS_verify_result(X, T)                                                         \
    X(T, U64, _, job_id, 0, REQ, NONE, "job_id of the verify job")                                 \
    X(T, U64, _, group_id, 0, REQ, NONE, "group_id of the verify job")                             \
    X(T, U32, _, segment_id, 0, REQ, NONE, "segment_id of the verify job")                         \
    X(T, U8, _, side, 1, REQ, NONE, "side of the verify job: 0 = s_t0, 1 = s_t1")                  \
    X(T, U32, _, k, 4096, REQ, NONE, "continuations actually run")                                 \
    X(T, U32, _, successes, 0, REQ, AT_MOST("k"), "continuations that ended in success")           \
    X(T, F32, _, reward_sum, 0, REQ, NONE, "sum of the continuations' rewards")                    \
    X(T, U64, _, env_steps, 0, REQ, NONE, "environment steps spent (verification cost)")           \
    X(T, U64, _, policy_tokens, 0, REQ, NONE, "policy tokens spent (verification cost)")           \
    X(T, U64, _, policy_version, 0, REQ, NONE, "policy version used")                              \
    X(T, U32, _, verifier_id, 0, REQ, NONE, "verifier that ran the job")                           \
    X(T, U32, _, wall_ms, 0, REQ, NONE, "wall time spent on the job (ms)")                         \
    X(T, ARR_OBJ, trajectory, continuations, 4096, OPT, NONE,                                      \
      "with want_continuations: the k continuations, each the steps from the restored state on")

/* ---- 4 CREDITED_GROUP ---------------------------------------------------------------- */

#define PV_WIRE_FIELDS_continuation_group(X, T)                                                    \
    X(T, U32, _, traj, 0, REQ, NONE,                                                               \
      "trajectory of group.trajectories whose state was restored (the receiver bounds-checks it)") \
    X(T, U32, _, t, 0, REQ, NONE,                                                                  \
      "step the continuations start from: their context is the "                                   \
      "trajectory's history o_0 .. o_t")                                                           \
    X(T, U8, _, side, 1, REQ, NONE, "side of the segment (0 = s_t0, 1 = s_t1)")                    \
    X(T, ARR_OBJ, trajectory, trajectories, 4096, REQ, NONE,                                       \
      "the continuations sampled from that state: one group sharing its prefix")

#define PV_WIRE_FIELDS_segment(X, T)                                                               \
    X(T, U32, _, traj, 0, REQ, NONE,                                                               \
      "trajectory index into group.trajectories (the receiver bounds-checks it)")                  \
    X(T, U32, _, t0, 0, REQ, AT_MOST("t1"), "first step of the segment")                           \
    X(T, U32, _, t1, 0, REQ, NONE, "one past the last step of the segment: steps [t0, t1)")        \
    X(T, F32, _, p_before, 0, REQ, NONE, "estimated P(success | s_t0)")                            \
    X(T, F32, _, p_after, 0, REQ, NONE, "estimated P(success | s_t1)")                             \
    X(T, F32, _, delta, 0, REQ, NONE, "p_after - p_before")                                        \
    X(T, U32, _, k, 4096, REQ, NONE, "continuations per side")                                     \
    X(T, BOOL, _, verified, 0, REQ, NONE, "both sides were verified (false: delta is not usable)")

#define PV_WIRE_FIELDS_turn_roles(X, T)                                                            \
    X(T, U32, _, traj, 0, REQ, NONE,                                                               \
      "trajectory index into group.trajectories (the receiver bounds-checks it)")                  \
    X(T, ARR_U32, _, roles, 4096, REQ, NONE,                                                       \
      "TRIAGE role of each action turn, one per step: 0 = decisive, 1 = exploration, 2 = "         \
      "no_progress, 3 = regression, any other value = not labelled (the learner's model-free "     \
      "rule); the receiver checks the count against the trajectory's steps")

#define PV_WIRE_FIELDS_credited_group(X, T)                                                        \
    X(T, OBJ, rollout_group, group, 0, REQ, NONE, "the rollout group, as the actor sent it")       \
    X(T, STR, _, judge, 64, REQ, NONE, "judge that proposed the segments, e.g. \"contrast\"")      \
    X(T, ARR_OBJ, segment, segments, 4096, REQ, NONE, "proposed segments with their estimates")    \
    X(T, U32, _, proposals, 0, REQ, NONE, "segments the judge proposed")                           \
    X(T, U64, _, verify_env_steps, 0, REQ, NONE, "environment steps spent verifying this group")   \
    X(T, U64, _, verify_policy_tokens, 0, REQ, NONE, "policy tokens spent verifying this group")   \
    X(T, U32, _, precision_samples, 0, REQ, NONE,                                                  \
      "proposals the oracle labelled (prover.measure_precision; 0 = not measured)")                \
    X(T, U32, _, precision_hits, 0, REQ, AT_MOST("precision_samples"),                             \
      "of those, the pivotal ones: an action the oracle labels progress on a success, or "         \
      "regress on a failure (judge precision = hits / samples)")                                   \
    X(T, ARR_OBJ, continuation_group, continuation_groups, 8192, OPT, NONE,                        \
      "prover.reuse_continuations: the verifiers' continuations, one group per verified state, "   \
      "to train on")                                                                               \
    X(T, ARR_OBJ, turn_roles, triage_labels, 1024, OPT, NONE,                                      \
      "algorithm.triage_labels = llm: the judge model's TRIAGE roles, one entry per trajectory "   \
      "it labelled (absent: the learner labels every turn model-free)")

/* ---- 5 WEIGHTS ----------------------------------------------------------------------- */

#define PV_WIRE_FIELDS_weights(X, T)                                                               \
    X(T, U64, _, policy_version, 0, REQ, NONE, "version of these weights")                         \
    X(T, U64, _, n_params, 0, REQ, ELEMS_OF("data"), "number of parameters")                       \
    X(T, STR, _, dtype, 16, REQ, ONE_OF("f32"), "element type: \"f32\" (little-endian IEEE 754)")  \
    X(T, U64, _, xxh3, 0, REQ, XXH3_OF("data"),                                                    \
      "XXH3-64 (seed 0) of the parameter bytes: the checksum of a policy version on every path "   \
      "(common/checksum.h)")                                                                       \
    X(T, BIN, _, data, 0, REQ, NONE,                                                               \
      "the parameters as one contiguous buffer; empty for an announcement only")

/* ---- 10.. broker protocol (Paranoid Pirate / Majordomo style) ------------------------ */

#define PV_WIRE_FIELDS_registration(X, T)                                                          \
    X(T, STR, _, service, 64, REQ, NONE,                                                           \
      "service the worker serves: \"judge\", \"verify\", \"learn\"")                               \
    X(T, U32, _, capacity, 0, REQ, NONE, "credits: jobs the worker can hold at once")              \
    X(T, STR, _, role, 64, REQ, NONE, "role of the process, e.g. \"verifier\"")                    \
    X(T, STR, _, host, 256, REQ, NONE, "host name")                                                \
    X(T, U32, _, pid, 0, REQ, NONE, "process id on that host")                                     \
    X(T, STR, _, worker_id, 128, REQ, NONE, "stable worker name, unique per broker")               \
    X(T, U32, _, rank, 0, OPT, NONE,                                                               \
      "MPI world rank of the process in its job plus one; 0 or absent: not started by mpirun "     \
      "or srun")                                                                                   \
    X(T, U32, _, index, 0, OPT, NONE,                                                              \
      "index of the process among its role's (actor 3, verifier 0); for actors the actor index "   \
      "of their group ids (common/wire/job_ids.h)")

#define PV_WIRE_FIELDS_heartbeat(X, T)                                                             \
    X(T, U32, _, credits, 0, REQ, NONE, "jobs the sender can accept now")                          \
    X(T, U32, _, in_flight, 0, REQ, NONE, "jobs the sender holds")

#define PV_WIRE_FIELDS_submit(X, T)                                                                \
    X(T, STR, _, service, 64, REQ, NONE, "service to deliver to")                                  \
    X(T, U64, _, job_id, 0, REQ, NONE, "producer-chosen id, for deduplication")                    \
    X(T, BOOL, _, want_reply, 0, REQ, NONE, "route the worker's reply back to the producer")       \
    X(T, BIN, _, payload, 0, REQ, NONE, "an encoded inner message (a whole envelope)")

#define PV_WIRE_FIELDS_submit_ack(X, T)                                                            \
    X(T, U64, _, job_id, 0, REQ, NONE, "job_id of the submit")                                     \
    X(T, BOOL, _, accepted, 0, REQ, NONE, "the job was queued")                                    \
    X(T, STR, _, reason, 256, OPT, NONE,                                                           \
      "why not: \"\", \"queue_full\", \"unknown_service\", \"duplicate\", ...")                    \
    X(T, U32, _, queue_depth, 0, REQ, NONE, "jobs queued for the service after this one")          \
    X(T, U32, _, credits, 0, REQ, NONE, "jobs the producer may still submit (back-pressure)")

#define PV_WIRE_FIELDS_lease(X, T)                                                                 \
    X(T, U64, _, job_id, 0, REQ, NONE, "job being leased")                                         \
    X(T, STR, _, service, 64, REQ, NONE, "service of the job")                                     \
    X(T, U32, _, lease_ms, 0, REQ, NONE, "the lease expires this long after it was sent")          \
    X(T, U32, _, attempt, 0, REQ, NONE, "delivery attempt, 1 for the first")                       \
    X(T, BIN, _, payload, 0, REQ, NONE, "the submitted payload")

#define PV_WIRE_FIELDS_ack(X, T)                                                                   \
    X(T, U64, _, job_id, 0, REQ, NONE, "job finished")                                             \
    X(T, BOOL, _, ok, 0, REQ, NONE, "the job succeeded")                                           \
    X(T, STR, _, error, 4096, OPT, NONE, "what went wrong when not ok")                            \
    X(T, BIN, _, reply, 0, OPT, NONE, "payload routed back to the submitter when it asked for one")

#define PV_WIRE_FIELDS_reply(X, T)                                                                 \
    X(T, U64, _, job_id, 0, REQ, NONE, "job_id of the submit")                                     \
    X(T, BOOL, _, ok, 0, REQ, NONE, "the job succeeded")                                           \
    X(T, BIN, _, payload, 0, REQ, NONE, "the worker's reply payload")                              \
    X(T, STR, _, error, 4096, OPT, NONE,                                                           \
      "why not ok: the worker's error text, or the broker's reason (\"max_attempts\")")            \
    X(T, BOOL, _, dropped, 0, OPT, NONE,                                                           \
      "the broker gave the job up (error says why) and forgot its id: submit it again, or count "  \
      "it lost")

#define PV_WIRE_FIELDS_disconnect(X, T)                                                            \
    X(T, STR, _, reason, 256, REQ, NONE, "why the sender is leaving or dropping the peer")

/* ---- 20.. statistics ----------------------------------------------------------------- */

#define PV_WIRE_FIELDS_stats_request(X, T)                                                         \
    X(T, STR, _, format, 32, OPT, NONE, "reserved; empty for the default reply")

#define PV_WIRE_FIELDS_service_stats(X, T)                                                         \
    X(T, STR, _, name, 64, REQ, NONE, "service name")                                              \
    X(T, U32, _, depth_msgs, 0, REQ, NONE, "jobs queued")                                          \
    X(T, U64, _, depth_bytes, 0, REQ, NONE, "bytes queued")                                        \
    X(T, U32, _, max_msgs, 0, REQ, NONE, "queue bound in jobs")                                    \
    X(T, U64, _, max_bytes, 0, REQ, NONE, "queue bound in bytes")                                  \
    X(T, U64, _, enqueued, 0, REQ, NONE, "jobs accepted")                                          \
    X(T, U64, _, delivered, 0, REQ, NONE, "leases sent")                                           \
    X(T, U64, _, acked, 0, REQ, NONE, "jobs acknowledged")                                         \
    X(T, U64, _, requeued, 0, REQ, NONE, "jobs re-queued after a lease expired or a worker died")  \
    X(T, U64, _, expired, 0, REQ, NONE, "leases that expired")                                     \
    X(T, U64, _, rejected, 0, REQ, NONE, "submits refused (queue full, unknown service)")          \
    X(T, U32, _, workers_live, 0, REQ, NONE, "workers with a recent heartbeat")                    \
    X(T, F32, _, lease_p50_ms, 0, REQ, NONE, "median lease-to-ack latency (ms)")                   \
    X(T, F32, _, lease_p99_ms, 0, REQ, NONE, "99th percentile lease-to-ack latency (ms)")          \
    X(T, F32, _, rate_in, 0, REQ, NONE, "jobs accepted per second (recent)")                       \
    X(T, F32, _, rate_out, 0, REQ, NONE, "jobs acknowledged per second (recent)")                  \
    X(T, U32, _, inflight_msgs, 0, REQ, NONE, "jobs leased and not yet acked")                     \
    X(T, U64, _, inflight_bytes, 0, REQ, NONE, "payload bytes leased and not yet acked")           \
    X(T, U32, _, capacity, 0, REQ, NONE, "sum of the live workers' credits")                       \
    X(T, U64, _, acked_failed, 0, REQ, AT_MOST("acked"), "acks that reported the job failed")      \
    X(T, U64, _, duplicates, 0, REQ, NONE, "submits of a job id already queued, leased or done")   \
    X(T, U64, _, dropped, 0, REQ, NONE,                                                            \
      "jobs given up, lost by max_attempts workers (producer told)")                               \
    X(T, F32, _, rate_delivered, 0, REQ, NONE, "leases per second (recent)")                       \
    X(T, U64, _, lease_count, 0, REQ, NONE, "acks timed since start")                              \
    X(T, U64, _, lease_sum_us, 0, REQ, NONE, "their summed lease-to-ack time (us)")                \
    X(T, ARR_OBJ, error_count, reasons, 64, REQ, NONE,                                             \
      "refusals and drops by reason: \"rejected.queue_full\", \"dropped.max_attempts\", ...")      \
    X(T, U32, _, workers_benched, 0, OPT, NONE, "live workers benched now (no new leases)")        \
    X(T, U64, _, benched, 0, OPT, NONE,                                                            \
      "times a worker was benched for leases it let expire unacked")

#define PV_WIRE_FIELDS_worker_stats(X, T)                                                          \
    X(T, STR, _, worker_id, 128, REQ, NONE, "worker name")                                         \
    X(T, STR, _, service, 64, REQ, NONE, "service it serves")                                      \
    X(T, U32, _, last_heartbeat_ms, 0, REQ, NONE, "time since its last heartbeat (ms ago)")        \
    X(T, U32, _, in_flight, 0, REQ, NONE, "jobs it holds")                                         \
    X(T, U64, _, completed, 0, REQ, NONE, "jobs it acknowledged")                                  \
    X(T, U32, _, capacity, 0, REQ, NONE, "its credits")                                            \
    X(T, STR, _, routing_id, 128, REQ, NONE, "its ZeroMQ routing id in hex")                       \
    X(T, STR, _, role, 64, REQ, NONE, "role it registered with")                                   \
    X(T, STR, _, host, 256, REQ, NONE, "host name it registered with")                             \
    X(T, U32, _, pid, 0, REQ, NONE, "process id it registered with")                               \
    X(T, U64, _, registered_ms, 0, REQ, NONE, "time since it registered (ms)")                     \
    X(T, U32, _, window, 0, OPT, NONE, "leases the broker lets it hold now (earned by acks)")      \
    X(T, U64, _, lost, 0, OPT, NONE, "leases that expired on it")                                  \
    X(T, U64, _, times_benched, 0, OPT, NONE, "times it was benched")                              \
    X(T, U32, _, benched_ms, 0, OPT, NONE, "bench time left (ms); 0 = not benched")                \
    X(T, STR, _, key, 64, OPT, NONE, "name of the CURVE key it authenticated with (\"\" = none)")

#define PV_WIRE_FIELDS_error_count(X, T)                                                           \
    X(T, STR, _, name, 64, REQ, NONE,                                                              \
      "counter name: an error class (\"bad_message\", \"not_registered\"), a reason "              \
      "(\"rejected.queue_full\") or a traffic counter (\"bytes_in\"); broker/broker_stats.h")      \
    X(T, U64, _, count, 0, REQ, NONE, "occurrences since start")

#define PV_WIRE_FIELDS_peer_event(X, T)                                                            \
    X(T, U64, _, ago_ms, 0, REQ, NONE, "time since the event (ms)")                                \
    X(T, STR, _, event, 8, REQ, ONE_OF("joined|left"), "a REGISTER of a new peer, or a peer gone") \
    X(T, STR, _, role, 64, REQ, NONE, "role it registered with")                                   \
    X(T, STR, _, service, 64, REQ, NONE, "service it worked for; empty: a client")                 \
    X(T, STR, _, host, 256, REQ, NONE, "host name it registered with")                             \
    X(T, U32, _, pid, 0, REQ, NONE, "process id it registered with")                               \
    X(T, U32, _, rank, 0, REQ, NONE, "its MPI world rank plus one; 0: not under MPI")              \
    X(T, U32, _, index, 0, REQ, NONE, "its index among its role's processes")                      \
    X(T, STR, _, reason, 32, OPT, NONE, "left: why (\"disconnected\", \"expired\", ...)")

#define PV_WIRE_FIELDS_judge_status(X, T)                                                          \
    X(T, STR, _, judge, 64, REQ, NONE,                                                             \
      "the judge that proposed the segments: \"contrast\", \"llm\", \"contrast-fallback\" (llm "   \
      "fell "                                                                                      \
      "back), ...")                                                                                \
    X(T, U64, _, verified, 0, REQ, NONE, "segments of its proposals verified on both sides")       \
    X(T, U64, _, positive, 0, REQ, AT_MOST("verified"), "of those, the ones with delta > 0")       \
    X(T, F32, _, acceptance_rate, 0, REQ, NONE,                                                    \
      "positive / verified, in [0, 1] (the paper: random 0.195, LLM judges 0.585-0.724)")          \
    X(T, F32, _, acceptance_rate_noise, 0, REQ, NONE,                                              \
      "the share expected positive by noise alone, in [0, 1] (learner/prover_credit.h)")           \
    X(T, F32, _, segment_turns, 0, REQ, NONE, "mean actions per verified segment (>= 0)")

#define PV_WIRE_FIELDS_run_status(X, T)                                                            \
    X(T, STR, _, source, 16, REQ, ONE_OF("learner|judge"), "the role that reports")                \
    X(T, STR, _, run, 256, OPT, NONE, "the run's name (run.name or its folder)")                   \
    X(T, U64, _, iteration, 0, OPT, NONE, "learner: iterations done")                              \
    X(T, U64, _, iterations, 0, OPT, NONE, "learner: iterations planned (run.iterations)")         \
    X(T, U64, _, policy_version, 0, OPT, NONE, "learner: its policy version")                      \
    X(T, ARR_OBJ, judge_status, judges, 16, OPT, NONE,                                             \
      "learner: acceptance of the verified segments over the run, per judge that proposed")        \
    X(T, U64, _, llm_groups, 0, OPT, NONE,                                                         \
      "judge (prover.judge = llm): groups given to the model")                                     \
    X(T, U64, _, llm_answered, 0, OPT, NONE,                                                       \
      "judge: groups whose segment is the model's (<= llm_groups)")                                \
    X(T, U64, _, llm_requests, 0, OPT, NONE, "judge: HTTP requests sent, retries included")        \
    X(T, U64, _, llm_prompt_tokens, 0, OPT, NONE, "judge: usage.prompt_tokens summed")             \
    X(T, U64, _, llm_completion_tokens, 0, OPT, NONE, "judge: usage.completion_tokens summed")     \
    X(T, U32, _, llm_latency_p50_ms, 0, OPT, NONE,                                                 \
      "judge: median request latency over the last 1024 requests (ms)")                            \
    X(T, U32, _, llm_latency_p99_ms, 0, OPT, NONE, "judge: their 99th percentile (ms)")            \
    X(T, U64, _, llm_repairs, 0, OPT, NONE, "judge: repair turns sent after refused answers")      \
    X(T, U64, _, llm_tool_calls, 0, OPT, NONE, "judge: tool calls run")                            \
    X(T, ARR_OBJ, error_count, llm_fallbacks, 16, OPT, NONE,                                       \
      "judge: groups whose model answer was not used, by reason (\"TIMEOUT\", \"HTTP\", "          \
      "\"INVALID\", \"NO_SEGMENT\", \"INTERNAL\"): segment groups fell back to the contrast "      \
      "judge, TRIAGE labelling groups to the model-free labels")                                   \
    X(T, U64, _, ago_ms, 0, OPT, NONE,                                                             \
      "in STATS_REPLY: time since the broker received this status (ms); 0 when sent")

#define PV_WIRE_FIELDS_stats_reply(X, T)                                                           \
    X(T, U64, _, uptime_ms, 0, REQ, NONE, "time since the broker started (ms)")                    \
    X(T, ARR_OBJ, service_stats, services, 1024, REQ, NONE, "one entry per service")               \
    X(T, ARR_OBJ, worker_stats, workers, 65536, REQ, NONE, "one entry per live worker")            \
    X(T, ARR_OBJ, error_count, errors, 1024, REQ, NONE, "counted errors")                          \
    X(T, U32, _, peers, 0, REQ, NONE, "connected peers (workers and clients)")                     \
    X(T, U32, _, clients, 0, REQ, NONE, "connected peers that are not workers")                    \
    X(T, U64, _, weights_version, 0, REQ, NONE,                                                    \
      "newest complete policy version held by the relay (0 = none)")                               \
    X(T, U64, _, weights_bytes, 0, REQ, NONE, "size of that WEIGHTS message")                      \
    X(T, U32, _, weights_waiting, 0, REQ, NONE, "subscribers waiting for a newer version")         \
    X(T, ARR_OBJ, error_count, io, 16, REQ, NONE,                                                  \
      "traffic counters: msgs_in, bytes_in, msgs_out, bytes_out")                                  \
    X(T, ARR_OBJ, peer_event, events, 64, OPT, NONE, "the last joins and leaves, newest first")    \
    X(T, U32, _, actor_index_next, 0, OPT, NONE,                                                   \
      "one more than the largest actor index registered since the broker started (0 = none): "     \
      "where cluster/add-actors starts")                                                           \
    X(T, ARR_OBJ, run_status, runs, 2, OPT, NONE,                                                  \
      "the latest RUN_STATUS of each source (learner, judge) the broker holds")

#define PV_WIRE_FIELDS_weights_request(X, T)                                                       \
    X(T, U64, _, have_version, 0, REQ, NONE, "newest version the subscriber has (0 = none)")

/* ---- lists --------------------------------------------------------------------------- */

/* Every struct, in dependency order: X(name, "doc"). */
#define PV_WIRE_STRUCTS(X)                                                                         \
    X(env, "Environment family of a task.")                                                        \
    X(task, "One environment instance: split, task id and seed (pv_task_t).")                      \
    X(step, "One step of a trajectory.")                                                           \
    X(trajectory, "One episode.")                                                                  \
    X(rollout_group, "A group of G trajectories sampled for the same task (actor -> judge).")      \
    X(verify_job, "One state to verify: restore it and sample K continuations (judge -> "          \
                  "verifier).")                                                                    \
    X(verify_result, "Outcome of a verify job (verifier -> judge).")                               \
    X(segment, "A proposed pivotal segment and its verified success-rate difference.")             \
    X(continuation_group, "The continuations from one restored state (judge -> learner).")         \
    X(turn_roles, "The TRIAGE roles a judge gave the action turns of one trajectory.")             \
    X(credited_group, "A rollout group with its verified segments (judge -> learner).")            \
    X(weights, "Policy parameters, or an announcement of a new version (learner -> relay).")       \
    X(registration, "A worker offers a service (worker -> broker).")                               \
    X(heartbeat, "Liveness and credit (both ways).")                                               \
    X(submit, "A job for a service (producer -> broker).")                                         \
    X(submit_ack, "The broker's answer to a submit (broker -> producer).")                         \
    X(lease, "A job handed to a worker for lease_ms (broker -> worker).")                          \
    X(ack, "A worker finished a job (worker -> broker).")                                          \
    X(reply, "A worker's reply routed back to the producer (broker -> producer).")                 \
    X(disconnect, "The sender is leaving, or drops the peer.")                                     \
    X(stats_request, "Ask the broker for its statistics.")                                         \
    X(error_count, "One named counter (an error class, a reason, traffic).")                       \
    X(service_stats, "Counters of one service queue.")                                             \
    X(worker_stats, "State of one worker.")                                                        \
    X(peer_event, "A peer joined or left.")                                                        \
    X(judge_status, "Acceptance of one judge's verified segments.")                                \
    X(run_status, "How the run goes: the learner's acceptance rates, the LLM judge's cost "        \
                  "(learner or judge -> broker).")                                                 \
    X(stats_reply, "The broker's statistics (broker -> prover-stats).")                            \
    X(weights_request, "Ask the relay for weights newer than have_version (subscriber -> "         \
                       "broker).")

/* Every message type: X(id, NAME, body struct). Ids are append-only. */
#define PV_WIRE_MESSAGES(X)                                                                        \
    X(1, ROLLOUT_GROUP, rollout_group)                                                             \
    X(2, VERIFY_JOB, verify_job)                                                                   \
    X(3, VERIFY_RESULT, verify_result)                                                             \
    X(4, CREDITED_GROUP, credited_group)                                                           \
    X(5, WEIGHTS, weights)                                                                         \
    X(10, REGISTER, registration)                                                                  \
    X(11, HEARTBEAT, heartbeat)                                                                    \
    X(12, SUBMIT, submit)                                                                          \
    X(13, SUBMIT_ACK, submit_ack)                                                                  \
    X(14, LEASE, lease)                                                                            \
    X(15, ACK, ack)                                                                                \
    X(16, REPLY, reply)                                                                            \
    X(17, DISCONNECT, disconnect)                                                                  \
    X(20, STATS_REQUEST, stats_request)                                                            \
    X(21, STATS_REPLY, stats_reply)                                                                \
    X(22, WEIGHTS_REQUEST, weights_request)                                                        \
    X(23, RUN_STATUS, run_status)

#endif
