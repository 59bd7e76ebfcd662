/* config_keys.h - every configuration key of a prover run, described once.
 *
 * From this list follow the pv_config_t struct (config.h), the YAML/command-line parser and
 * its error messages (config.c), the defaults, and docs/config.md (`prover-config
 * --describe`). Add a key here and nowhere else.
 *
 * Each section is an X-macro taking five entry macros:
 *   I(section, key, default, min, max, doc)   integer (int64_t), inclusive range
 *   F(section, key, default, min, max, doc)   float (double), inclusive range
 *   B(section, key, default, doc)             boolean (true/false)
 *   S(section, key, default, doc)             string (at most PV_CONFIG_STR_MAX - 1 bytes)
 *   E(section, key, default, choices, doc)    one of the '|'-separated choices, stored as text
 * Names follow verl where a verl user would look for them (clip_ratio_low, loss_agg_mode,
 * adv_estimator, kl_loss_type, ...).
 *
 * A sub-section `a_b`, listed in PV_CONFIG_SUBSECTIONS as X(a, b) and right after its parent
 * `a` in PV_CONFIG_SECTIONS, is written `a.b`: its keys are `a.b.key` on the command line and
 * `b:` nested under `a:` in YAML (cluster.slurm.nodes). In C it is cfg.a_b.key.
 */
#ifndef PV_CONFIG_KEYS_H
#define PV_CONFIG_KEYS_H

#define PV_CONFIG_SECTIONS(X)                                                                      \
    X(run)                                                                                         \
    X(env)                                                                                         \
    X(policy)                                                                                      \
    X(actor)                                                                                       \
    X(algorithm)                                                                                   \
    X(prover)                                                                                      \
    X(judge)                                                                                       \
    X(learner)                                                                                     \
    X(broker)                                                                                      \
    X(cluster)                                                                                     \
    X(cluster_slurm)

/* Sub-sections X(parent, child): section parent_child is written parent.child. */
#define PV_CONFIG_SUBSECTIONS(X) X(cluster, slurm)

#define PV_CONFIG_run(I, F, B, S, E)                                                               \
    S(run, name, "",                                                                               \
      "Run name, in the progress line, prover-stats and /metrics; empty = the "                    \
      "last folder of run.out_dir.")                                                               \
    I(run, seed, 1, 0, INT64_MAX, "Master seed; every RNG in the run is derived from it.")         \
    S(run, out_dir, "runs/default", "Folder for metrics.jsonl, checkpoints, plots, summary.")      \
    E(run, log_level, "info", "debug|info|warn|error", "Lowest log level printed.")                \
    I(run, iterations, 40, 1, 1000000, "Learner updates (iterations) before the run ends.")        \
    I(run, time_limit_s, 0, 0, INT64_MAX,                                                          \
      "Stop after this many seconds (summary outcome time_limit); 0 = no limit.")                  \
    I(run, stall_timeout_s, 600, 0, 86400,                                                         \
      "A run whose learner receives no group for this many seconds ends as failed (exit 1, "       \
      "outcome failed and the reason in summary.json); 0 = never.")

#define PV_CONFIG_env(I, F, B, S, E)                                                               \
    E(env, name, "alfworld", "alfworld|webshop|searchqa", "Environment family.")                   \
    S(env, data_path, "", "Benchmark data (file or folder); empty = the embedded generator.")      \
    I(env, max_steps, 0, 0, 1000, "Episode step limit; 0 = the benchmark's default.")              \
    I(env, seed, 7, 0, INT64_MAX, "Generator seed (catalogue, corpus), not the task seed.")        \
    I(env, gen_receptacles, 0, 0, 64, "alfworld generator: receptacles per room; 0 = default.")    \
    I(env, gen_distractors, 0, 0, 256, "Generator: distractor objects/items; 0 = default.")        \
    I(env, gen_task_types, 0, 0, 126,                                                              \
      "alfworld generator: task types, bit i = ALFWorld type i (1 pick_and_place_simple, 2 "       \
      "look_at_obj_in_light, 3 clean, 4 heat, 5 cool, 6 pick_two_obj); 0 = all six.")              \
    I(env, gen_size, 0, 0, 1000000, "webshop/searchqa generator: products/entities; 0 = default.") \
    I(env, top_k, 3, 1, 20, "searchqa: passages returned per search.")                             \
    B(env, shuffle_tasks, false,                                                                   \
      "Visit a finite training split (a benchmark's data files) in a new seeded order on each "    \
      "pass, in the actors' task schedule and in behaviour cloning's batches (verl's "             \
      "data.shuffle); false = file order. Generated tasks are in random order already. On "        \
      "webshop.yaml (5 seeds, 2026-12-07) file order did as well: ProVer score 54.1 / success "    \
      "0.180 against 49.6 / 0.168 shuffled.")                                                      \
    E(env, expert, "planner", "planner|search",                                                    \
      "alfworld: the expert of demonstrations (behaviour cloning) and prover-env expert: planner " \
      "= a shortest plan over the whole state (it knows where hidden objects are); search = "      \
      "ALFWorld's handcoded expert's way, planning over the objects it has seen and searching "    \
      "the receptacles for the rest, which a policy that sees only the observations can imitate. " \
      "The oracle judge uses the planner either way.")

#define PV_CONFIG_policy(I, F, B, S, E)                                                            \
    E(policy, kind, "bow_mlp", "bow_mlp|transformer",                                              \
      "Policy model: bow_mlp = hashed bag-of-words scorer of the admissible actions; "             \
      "transformer = a Llama/Qwen-family language model that writes the action token by token "    \
      "(docs/policy-and-learner.md).")                                                             \
    I(policy, hash_buckets, 32768, 64, 1 << 24, "bow_mlp: hashed word/bigram feature buckets.")    \
    I(policy, embed_dim, 32, 1, 1024, "bow_mlp: feature embedding width.")                         \
    I(policy, hidden_dim, 64, 1, 4096, "bow_mlp: hidden layer width of the scorer.")               \
    I(policy, history, 8, 0, 64, "bow_mlp: recent observation/action texts in the context.")       \
    S(policy, init_checkpoint, "", "Start from this checkpoint's policy; empty = random init.")    \
    S(policy, path, "",                                                                            \
      "transformer: a Hugging Face model directory (config.json, model.safetensors, "              \
      "tokenizer.json), e.g. a downloaded Qwen2.5 or Llama 3; empty = a new model of the sizes "   \
      "below with a vocabulary learned from the environment's texts.")                             \
    S(policy, tokenizer, "",                                                                       \
      "transformer without path: a tokenizer.json to use; empty = learn policy.vocab_size ids "    \
      "from env.name's texts at start-up (deterministic: every role learns the same).")            \
    I(policy, vocab_size, 1024, 260, 1 << 20,                                                      \
      "transformer: ids of the learned vocabulary (bytes, merges, 3 chat tokens; fewer when the "  \
      "texts run out of pairs).")                                                                  \
    E(policy, decode, "generate", "generate|rank|constrain",                                       \
      "transformer: write the action token by token; or score every admissible action by its "     \
      "sequence log-prob and pick among them; or write it token by token with each token masked "  \
      "to the continuations of the admissible actions' tokens (always admissible, log-probs of "   \
      "the renormalised distribution, trained with the same mask).")                               \
    I(policy, max_new_tokens, 0, 0, 4096,                                                          \
      "transformer: tokens of one generated action, end token included; 0 = the model "            \
      "directory's prover_policy.json, else 32.")                                                  \
    I(policy, prompt_window, 0, 0, 4096,                                                           \
      "transformer: a prompt keeps between W and 2W - 1 earlier turns (observation + action); 0 "  \
      "= the model directory's, else 4.")                                                          \
    I(policy, max_context, 0, 0, 1 << 20,                                                          \
      "transformer: tokens of a prompt plus its action (KV cache, training sequences); 0 = the "   \
      "model directory's, else 1024 (at most max_position_embeddings).")                           \
    B(policy, prompt_task_each_turn, false,                                                        \
      "transformer: end every user turn after the first with 'Your task is to: ...' (verl-agent "  \
      "restates the task at every step), so the task stands next to the observation the action "   \
      "answers; the prompt still grows turn by turn (alfworld, webshop).")                         \
    B(policy, prompt_admissible, false,                                                            \
      "transformer: end the current observation's turn with the admissible actions (verl-agent's " \
      "prompts); makes every prompt new to the KV cache.")                                         \
    I(policy, blas_threads, 1, 1, 256, "transformer: OpenBLAS threads per process.")               \
    I(policy, train_threads, 1, 1, 16,                                                             \
      "transformer: threads of the training forward and backward (behaviour cloning, the "         \
      "learner's update): each takes whole chunks of sequences with its own scratch and "          \
      "gradient; 1 per process by default, up to the cores a process may use.")                    \
    I(policy, layers, 0, 0, 1024, "transformer without path: decoder layers; 0 = 4.")              \
    I(policy, hidden_size, 0, 0, 65536, "transformer without path: hidden size C; 0 = 192.")       \
    I(policy, heads, 0, 0, 1024, "transformer without path: attention heads; 0 = 6.")              \
    I(policy, kv_heads, 0, 0, 1024, "transformer without path: key/value heads; 0 = 2.")           \
    I(policy, head_dim, 0, 0, 4096,                                                                \
      "transformer without path: head size; 0 = 32, or hidden_size / heads when either is set.")   \
    I(policy, intermediate_size, 0, 0, 1 << 20, "transformer without path: MLP size; 0 = 512.")

#define PV_CONFIG_actor(I, F, B, S, E)                                                             \
    I(actor, group_size, 8, 1, 64, "Trajectories per group (G) sampled for one task.")             \
    F(actor, temperature, 1.0, 0.0, 100.0,                                                         \
      "Sampling temperature T: actors and verifiers sample from softmax(score / T) and the "       \
      "learner's log-probs use the same T (verl's rollout.temperature); 0 = greedy actors.")       \
    I(actor, batch, 0, 0, 64,                                                                      \
      "Episodes of a group, and continuations of a verification job, played at once in lockstep "  \
      "when the policy batches (policy.kind = transformer: one decode step for all, each its own " \
      "environment and KV-cache slot, max_context positions each); 0 = all of them (at most "      \
      "64), 1 = one after the other. New weights are taken between lockstep batches.")             \
    I(actor, window, 2, 1, 1024,                                                                   \
      "Groups an actor may have submitted and not yet judged (bounds the policy lag).")            \
    I(actor, index_offset, 0, 0, 4194302,                                                          \
      "Index of this job's first actor: actor i has index offset + i in its group ids "            \
      "((index + 1) << 40 | sequence) and plays tasks from it; cluster/add-actors sets it past "   \
      "every actor index the broker has seen, so the ids never collide.")

#define PV_CONFIG_algorithm(I, F, B, S, E)                                                         \
    E(algorithm, adv_estimator, "prover",                                                          \
      "grpo|prover|drgrpo|rloo|reinforce_plus_plus_baseline|gigpo|pgpo|spopp|triage|vict",         \
      "Advantage estimator; prover = GRPO plus verified pivotal-segment credit; gigpo = "          \
      "verl-agent's GiGPO (episode plus anchor-state step advantages, no verifiers); pgpo = "      \
      "potential differences of anchor states (learner/pgpo.h); spopp = outcome minus a "          \
      "persistent per-task value, token-standardised (learner/spopp.h); triage = GRPO plus "       \
      "role-typed process rewards from model-free labels, or the judge's model's "                 \
      "(algorithm.triage_labels) (learner/triage_adv.h); vict = GRPO's "                           \
      "outcome advantage redistributed along the goal atoms' proof edges (learner/vict.h).")       \
    B(algorithm, norm_adv_by_std_in_grpo, true, "GRPO: divide by the group std (verl's flag).")    \
    F(algorithm, gigpo_step_weight, 1.0, 0.0, 1000.0,                                              \
      "GiGPO: weight of the step-relative advantage (verl-agent "                                  \
      "algorithm.gigpo.step_advantage_w).")                                                        \
    F(algorithm, gigpo_gamma, 0.95, 0.0, 1.0,                                                      \
      "GiGPO: discount of the step returns that step groups compare (verl-agent algorithm.gamma; " \
      "0.95 as in its ALFWorld and WebShop scripts; its ppo_trainer.yaml says 1.0).")              \
    E(algorithm, gigpo_mode, "mean_std_norm", "mean_std_norm|mean_norm",                           \
      "GiGPO: normalise both parts by mean and std, or subtract the mean only (verl-agent "        \
      "algorithm.gigpo.mode; mean_std_norm as in its ALFWorld script, mean_norm in its yaml).")    \
    E(algorithm, gigpo_anchor, "observation", "observation|state",                                 \
      "GiGPO: what makes steps of a group one anchor state: equal observation text (verl-agent's " \
      "anchor_obs, exact match) or equal environment state key (pv_env_state_key).")               \
    F(algorithm, pgpo_gamma, 1.0, 0.0, 1.0,                                                        \
      "PGPO: discount of the returns-to-go whose anchor-state means are the potentials, and of "   \
      "the next state's potential in A = r + gamma Phi(s') - Phi(s) (our reading; 1 makes the "    \
      "first step's advantage GRPO's when no later state is shared).")                             \
    E(algorithm, pgpo_norm, "std", "std|none",                                                     \
      "PGPO: divide the step advantages by the episode group's outcome std (+ 1e-6; not when it "  \
      "is 0) or leave them unscaled.")                                                             \
    E(algorithm, pgpo_anchor, "observation", "observation|state",                                  \
      "PGPO: what makes two steps of a group one state: equal observation text or equal "          \
      "environment state key (as algorithm.gigpo_anchor).")                                        \
    F(algorithm, spopp_decay, 0.9, 0.0, 1.0,                                                       \
      "SPO++: forgetting factor rho of the per-task value (S <- rho S + R, W <- rho W + 1, "       \
      "v = S / W; SPO's Beta tracker with a fixed rho); must be > 0.")                             \
    F(algorithm, spopp_prior_mean, 0.5, -1000.0, 1000.0,                                           \
      "SPO++: the value of a task never seen (the prior mean m0: S = m0 n0, W = n0).")             \
    F(algorithm, spopp_prior_strength, 1.0, 0.0, 1000.0,                                           \
      "SPO++: the prior's weight n0 in pseudo-observations; must be > 0.")                         \
    F(algorithm, triage_lambda, 0.2, 0.0, 100.0,                                                   \
      "TRIAGE: weight of the role rewards (Decisive 1, Exploration 0.5, No-progress -0.1, "        \
      "Regression -0.5) added to GRPO's advantage; the paper's 0.2 on ALFWorld and WebShop, 0.4 "  \
      "on SearchQA.")                                                                              \
    E(algorithm, triage_labels, "env", "env|llm",                                                  \
      "TRIAGE: who labels the action turns: env = the model-free rule from state changes "         \
      "(common/traj/triage.h); llm = the judge's model (judge.*) labels every turn of each "       \
      "group, "                                                                                    \
      "routed through prover-judge, the model-free label the fallback for turns it did not label " \
      "(judge/llm_label.h); ignored by the other estimators.")                                     \
    E(algorithm, vict_split, "conserve", "conserve|broadcast",                                     \
      "VICT: how a row's advantage goes along its proof steps: conserve = A_i N_i / N_P on each "  \
      "proof token (the row's GRPO mass, redistributed), broadcast = A_i on each; 0 off the "      \
      "proof.")                                                                                    \
    E(algorithm, vict_failed, "all", "all|proof",                                                  \
      "VICT: a failed trajectory keeps GRPO's advantage on every step (all) or redistributes it "  \
      "along the proof of the goal atoms it did satisfy (proof).")

#define PV_CONFIG_prover(I, F, B, S, E)                                                            \
    E(prover, judge, "contrast", "contrast|random|oracle|exhaustive|llm",                          \
      "Who proposes pivotal segments; llm = a model behind an OpenAI-compatible endpoint "         \
      "(judge.*, docs/judge-llm.md).")                                                             \
    F(prover, lambda, 1.0, 0.0, 100.0, "Weight of the verified delta added to the advantage.")     \
    E(prover, sign, "positive", "positive|both",                                                   \
      "Use positive deltas only (paper) or both signs.")                                           \
    E(prover, apply, "add", "add|replace",                                                         \
      "Add lambda*delta to the GRPO advantage or replace it.")                                     \
    I(prover, k, 8, 1, 1024, "Continuations sampled from each end of a segment (the paper's K).")  \
    I(prover, max_segments, 1, 1, 64,                                                              \
      "Segments proposed per eligible group (the paper: 1; exhaustive proposes every step).")      \
    I(prover, max_segment_turns, 4, 1, 64, "Actions per proposed segment, at most (paper: 4).")    \
    I(prover, min_successes, 1, 1, 64,                                                             \
      "Eligible groups have at least this many successes (paper: 1 of G = 8); others: GRPO.")      \
    I(prover, max_successes, 3, 1, 64,                                                             \
      "Eligible groups have at most this many successes (paper: 3 of G = 8); others: GRPO.")       \
    E(prover, contrast_key, "task", "task|state",                                                  \
      "What the contrast judge compares: task facts (pv_env_task_key) or whole states.")           \
    E(prover, contrast_rule, "prefix", "prefix|value|divergence",                                  \
      "Contrast judge: the largest jump of the success rate of the group's trajectories that "     \
      "share the success's first actions (prefix), of the group's state value (value), or the "    \
      "first action reaching a state no failure reached (divergence, the earlier rule).")          \
    I(prover, verify_budget, 2000, 0, INT64_MAX,                                                   \
      "Environment steps a group's verification may spend; 0 = unlimited.")                        \
    B(prover, verify_failures, false,                                                              \
      "Also verify segments proposed from failed trajectories when sign = positive.")              \
    I(prover, verify_timeout_ms, 60000, 100, 86400000,                                             \
      "A group's verification ends after this (at most 3/4 of broker.lease_ms); unfinished "       \
      "segments go out unverified.")                                                               \
    B(prover, reuse_continuations, false,                                                          \
      "Train on the verifiers' continuations too: each verified state's K continuations become "   \
      "a group (GRPO within it), only their own steps trained (beyond the paper).")                \
    I(prover, judge_capacity, 4, 1, 4096, "Groups one prover-judge works on at once.")             \
    B(prover, measure_precision, false,                                                            \
      "Judge precision: the oracle labels every proposal (restores its states and asks the "       \
      "environment's expert: costs expert searches); reported as judge_precision.")

/* prover.judge = llm: the endpoint, its model and the conversation's bounds (judge/llm_judge.h). */
#define PV_CONFIG_judge(I, F, B, S, E)                                                             \
    S(judge, base_url, "http://127.0.0.1:8000/v1",                                                 \
      "prover.judge = llm: the OpenAI-compatible endpoint; requests go to "                        \
      "BASE_URL/chat/completions (vLLM, llama-server, Ollama: docs/judge-llm.md).")                \
    S(judge, model, "", "The model the endpoint serves (the request's model field).")              \
    S(judge, api_key_env, "OPENAI_API_KEY",                                                        \
      "NAME of the environment variable holding the API key (sent as a Bearer token, never "       \
      "logged or written); empty, or the variable unset = no key.")                                \
    I(judge, timeout_ms, 20000, 100, 3600000, "One request to the endpoint gives up after this.")  \
    I(judge, group_timeout_ms, 60000, 100, 86400000,                                               \
      "A group's whole conversation (tool turns, repairs, retries), at most half the judge's "     \
      "lease (broker.lease_ms); after it the group falls back to the contrast judge.")             \
    I(judge, retries, 2, 0, 20,                                                                    \
      "Retries of a failed request (network error, timeout, HTTP 408/429/5xx, unreadable "         \
      "reply), with exponential back-off.")                                                        \
    I(judge, backoff_ms, 500, 0, 600000, "Delay before the first retry; doubled for each next.")   \
    I(judge, max_in_flight, 4, 1, 1024, "Requests to the endpoint at once (more wait in order).")  \
    F(judge, temperature, 0.0, 0.0, 2.0, "Sampling temperature of the judge model.")               \
    I(judge, max_tokens, 1024, 16, 1000000, "Completion tokens per request (max_tokens).")         \
    I(judge, max_repairs, 3, 0, 10,                                                                \
      "Repair turns after a refused answer (the validator's message goes back to the model), "     \
      "then the contrast fallback.")                                                               \
    I(judge, max_tool_calls, 8, 0, 64,                                                             \
      "Tool calls per group (search_trajectory, get_segment); 0 = no tools offered.")              \
    E(judge, response_format, "json_schema", "json_schema|json_object|guided_json|none",           \
      "How the answer's JSON schema reaches the endpoint: response_format json_schema (OpenAI, "   \
      "vLLM, llama-server, Ollama), json_object with a schema (llama-server), vLLM's "             \
      "guided_json, or none.")                                                                     \
    I(judge, obs_chars, 400, 32, 100000,                                                           \
      "An observation in the prompt or a tool result is cut to this many bytes.")                  \
    I(judge, preview_turns, 6, 0, 1000,                                                            \
      "Turns of each failed trajectory in its preview: the first third and the last ones.")

#define PV_CONFIG_learner(I, F, B, S, E)                                                           \
    F(learner, lr, 1e-3, 0.0, 10.0, "Adam learning rate.")                                         \
    F(learner, beta1, 0.9, 0.0, 1.0, "Adam beta1.")                                                \
    F(learner, beta2, 0.999, 0.0, 1.0, "Adam beta2.")                                              \
    F(learner, eps, 1e-8, 0.0, 1.0, "Adam epsilon.")                                               \
    F(learner, weight_decay, 0.0, 0.0, 1.0, "Decoupled weight decay (AdamW).")                     \
    F(learner, grad_clip, 1.0, 0.0, 1e9, "Global gradient-norm clip; 0 = off.")                    \
    F(learner, clip_ratio_low, 0.2, 0.0, 1.0, "PPO clip: ratio floor is 1 - clip_ratio_low.")      \
    F(learner, clip_ratio_high, 0.2, 0.0, 10.0, "PPO clip: ratio ceiling is 1 + clip_ratio_high.") \
    F(learner, clip_ratio_c, 3.0, 1.0, 1e9, "Dual-clip constant c for negative advantages.")       \
    E(learner, loss_agg_mode, "token-mean",                                                        \
      "token-mean|seq-mean-token-sum|seq-mean-token-mean|seq-mean-token-sum-norm",                 \
      "How token losses are aggregated (verl's agg_loss).")                                        \
    F(learner, entropy_coeff, 0.0, 0.0, 10.0, "Entropy bonus coefficient.")                        \
    F(learner, invalid_action_penalty_coef, 0.0, 0.0, 100.0,                                       \
      "verl-agent's invalid-action penalty: the outcome the advantages are computed from is R - "  \
      "coef x (steps of the trajectory the environment refused); 0 = off. The outcome "            \
      "estimators (grpo, drgrpo, rloo, reinforce_plus_plus_baseline, spopp, vict; prover's "       \
      "GRPO); "                                                                                    \
      "gigpo, pgpo and triage refuse it.")                                                         \
    B(learner, use_kl_loss, false, "Add a KL-to-reference term to the loss.")                      \
    F(learner, kl_loss_coef, 0.001, 0.0, 100.0, "Weight of the KL term.")                          \
    E(learner, kl_loss_type, "k3", "k1|k2|k3", "KL estimator (Schulman's k1/k2/k3).")              \
    I(learner, ppo_epochs, 1, 1, 100, "Passes over each batch.")                                   \
    I(learner, batch_groups, 8, 1, 100000, "Groups per policy update.")                            \
    I(learner, ppo_mini_batch_groups, 0, 0, 100000,                                                \
      "Groups per PPO mini-batch (verl's actor.ppo_mini_batch_size, counted in prompts): each "    \
      "pass over a batch takes batch_groups / ppo_mini_batch_groups Adam steps, which must "       \
      "divide; 0 = batch_groups (one step per pass).")                                             \
    I(learner, max_policy_lag, 2, 0, 1000000,                                                      \
      "Drop (and count) groups older than this many policy versions (one per Adam step).")         \
    I(learner, bc_episodes, 0, 0, 1000000, "Expert episodes for a behaviour-cloning warm start.")  \
    I(learner, bc_epochs, 4, 0, 1000, "Passes over the behaviour-cloning demonstrations.")         \
    I(learner, bc_batch, 32, 1, 100000, "Demonstrations per behaviour-cloning step.")              \
    F(learner, bc_lr, 0.0, 0.0, 10.0, "Adam learning rate of behaviour cloning; 0 = learner.lr.")  \
    B(learner, bc_mask, false,                                                                     \
      "policy.decode=constrain: behaviour cloning's token cross-entropy over the masked "          \
      "distribution (the admissible actions' continuations) instead of the whole vocabulary "      \
      "(measured worse on alfworld-lm: 0.140 / 0.200 held-out against 0.340 / 0.340).")            \
    I(learner, eval_every, 10, 0, 1000000,                                                         \
      "Held-out evaluation (greedy and sampled) every N iterations; 0 = off. prover-train-local "  \
      "evaluates at the start and the end only unless given `--eval-every N` "                     \
      "(`cluster/eval-grid --local` passes this key's value).")                                    \
    I(learner, eval_tasks, 50, 1, 1000000,                                                         \
      "Held-out tasks per evaluation (at most the test split's size).")                            \
    E(learner, eval_split, "test", "test|train",                                                   \
      "Held-out tasks of the evaluation: test = the test split (ALFWorld's unseen task kinds, "    \
      "eval_out_of_distribution), train = new games of the training task kinds (ALFWorld's "       \
      "eval_in_distribution; the generated ALFWorld only, whose train split is unbounded).")       \
    F(learner, eval_temperature, 0.0, 0.0, 100.0,                                                  \
      "Softmax temperature of the sampled held-out evaluation; 0 = the rollout temperature "       \
      "(actor.temperature, 1 when that is 0). With actor.temperature > 1 the rollouts explore "    \
      "while eval_temperature=1 keeps the reported sampled success at T = 1.")                     \
    I(learner, health_every, 10, 0, 1000000,                                                       \
      "Record the broker's counters in metrics.jsonl every N iterations (and at the end, with "    \
      "the summary's conservation check); 0 = only at the end.")                                   \
    I(learner, checkpoint_every, 20, 0, 1000000,                                                   \
      "Checkpoint every N iterations; 0 = only at end.")                                           \
    S(learner, resume, "", "Resume the run from this checkpoint file.")

#define PV_CONFIG_broker(I, F, B, S, E)                                                            \
    S(broker, bind, "tcp://127.0.0.1:5555", "Endpoint the broker binds.")                          \
    S(broker, endpoint, "tcp://127.0.0.1:5555", "Endpoint the other roles connect to.")            \
    I(broker, heartbeat_ms, 1000, 10, 3600000, "Heartbeat interval.")                              \
    I(broker, liveness, 3, 1, 1000, "Missed heartbeats before a peer is dead.")                    \
    I(broker, lease_ms, 30000, 10, 86400000, "A job not acked within this is re-queued.")          \
    I(broker, max_queue_msgs, 1024, 1, 100000000, "Queue bound per service (messages).")           \
    I(broker, max_queue_bytes, 268435456, 1024, INT64_MAX, "Queue bound per service (bytes).")     \
    I(broker, metrics_port, 9100, 0, 65535, "HTTP port for Prometheus /metrics; 0 = off.")         \
    S(broker, curve_dir, "", "Folder with CURVE keys; empty = no encryption/authentication.")      \
    S(broker, curve_client, "",                                                                    \
      "Client key in curve_dir: NAME reads NAME.key; empty = ROLE.key if present, else "           \
      "client.key.")                                                                               \
    S(broker, services, "judge,verify,learn", "Comma-separated services workers register for.")    \
    I(broker, learner_timeout_s, 10, 0, 86400,                                                     \
      "Under mpirun: the broker stops every role when the learner has been gone from the learn "   \
      "service this long without ending the run (crashed, killed, host lost); 0 = never.")         \
    I(broker, role_timeout_s, 30, 0, 86400,                                                        \
      "Under mpirun: the run ends as failed, naming the lost process, when every judge or every "  \
      "actor has been gone from the broker this long, or the broker has not answered the "         \
      "learner this long; 0 = never.")                                                             \
    I(broker, max_attempts, 5, 0, 1000000,                                                         \
      "Different workers that may lose a job's lease (expiry, death) before the job is dropped "   \
      "with a failed reply; 0 = never dropped.")                                                   \
    I(broker, window_start, 1, 1, 65536,                                                           \
      "Leases a new worker may hold before its first ack; each ack adds one, up to what it "       \
      "declares; each lease period it lets a lease expire without acking anything halves them.")   \
    I(broker, bench_after, 2, 0, 1000000,                                                          \
      "Lease periods in a row in which a worker let a lease expire without acking anything, "      \
      "after which it is benched: no new lease for broker.bench_ms; 0 = never bench.")             \
    I(broker, bench_ms, 10000, 1, 86400000,                                                        \
      "A benched worker's first cooling period; it doubles while the worker acks nothing.")        \
    I(broker, weights_max_step, 1000000, 0, INT64_MAX,                                             \
      "The relay refuses a weights version more than this above the one it holds; 0 = any.")       \
    I(broker, dedup_window, 65536, 0, 1073741824,                                                  \
      "Completed job ids remembered, so a duplicate submit is not delivered again.")               \
    I(broker, max_peers, 4096, 1, 16777216, "Connected workers and clients at once.")              \
    S(broker, metrics_bind, "127.0.0.1", "IPv4 address of /metrics (0.0.0.0 = every interface).")  \
    I(broker, stats_window_ms, 10000, 10, 86400000,                                                \
      "Rates and latency percentiles cover the last one to two windows of this length.")

#define PV_CONFIG_cluster(I, F, B, S, E)                                                           \
    I(cluster, actors, 2, 1, 100000, "prover-actor processes.")                                    \
    I(cluster, judges, 1, 1, 1000, "prover-judge processes.")                                      \
    I(cluster, verifiers, 1, 0, 100000, "prover-verifier processes.")                              \
    S(cluster, hostfile, "",                                                                       \
      "MPI hostfile; empty = this machine. The broker runs on its first host (pinned there); "     \
      "not allowed with --slurm (the allocation decides the nodes).")                              \
    E(cluster, launcher, "mpirun", "mpirun|srun",                                                  \
      "Inside a Slurm allocation (cluster/launch --slurm): mpirun (MPMD app contexts, the broker " \
      "pinned to the first node with --host), or srun --mpi=pmix --multi-prog for sites that "     \
      "start MPI ranks with srun only.")

#define PV_CONFIG_cluster_slurm(I, F, B, S, E)                                                     \
    I(cluster_slurm, nodes, 1, 1, 100000,                                                          \
      "sbatch --nodes: the ranks are spread over this many nodes (the broker on the first).")      \
    S(cluster_slurm, time, "",                                                                     \
      "sbatch --time (e.g. 04:00:00, 2-00:00:00); empty = the partition's default.")               \
    S(cluster_slurm, partition, "", "sbatch --partition; empty = the site's default.")             \
    S(cluster_slurm, account, "", "sbatch --account; empty = the user's default.")                 \
    S(cluster_slurm, extra, "",                                                                    \
      "More sbatch options, one #SBATCH line each, e.g. '--qos=high --mem=64G "                    \
      "--constraint=ib'.")

#endif
